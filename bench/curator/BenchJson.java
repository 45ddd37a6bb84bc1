import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Just enough JSON for the worker protocol (no library on Debian's Curator class path does
 * it): reads objects, arrays, strings, numbers (whole ones as Long), booleans and null;
 * writes maps, collections, strings, numbers and booleans.
 */
public final class BenchJson {
    private final String text;
    private int at;

    public BenchJson(String text) {
        this.text = text;
    }

    /** A map from alternating keys and values, in that order. */
    public static Map<String, Object> obj(Object... keysAndValues) {
        Map<String, Object> out = new LinkedHashMap<>();
        for (int i = 0; i < keysAndValues.length; i += 2) out.put((String) keysAndValues[i], keysAndValues[i + 1]);
        return out;
    }

    @SuppressWarnings("unchecked")
    public static Map<String, Object> map(Object value) {
        return (Map<String, Object>) value;
    }

    public Object value() {
        space();
        char c = text.charAt(at);
        if (c == '{') {
            at++;
            Map<String, Object> out = new LinkedHashMap<>();
            if (take('}')) return out;
            do {
                space();
                String key = string();
                expect(':');
                out.put(key, value());
            } while (take(','));
            expect('}');
            return out;
        }
        if (c == '[') {
            at++;
            List<Object> out = new ArrayList<>();
            if (take(']')) return out;
            do out.add(value()); while (take(','));
            expect(']');
            return out;
        }
        if (c == '"') return string();
        for (String word : new String[] {"true", "false", "null"}) {
            if (text.startsWith(word, at)) {
                at += word.length();
                return word.equals("null") ? null : Boolean.valueOf(word);
            }
        }
        int start = at;
        while (at < text.length() && "+-0123456789.eE".indexOf(text.charAt(at)) >= 0) at++;
        String number = text.substring(start, at);
        if (number.isEmpty()) throw new IllegalArgumentException("bad JSON at " + start + ": " + text);
        return number.matches("-?\\d+") ? (Object) Long.valueOf(number) : (Object) Double.valueOf(number);
    }

    private String string() {
        expect('"');
        StringBuilder out = new StringBuilder();
        for (char c; (c = text.charAt(at++)) != '"'; ) {
            if (c != '\\') {
                out.append(c);
                continue;
            }
            char e = text.charAt(at++);
            switch (e) {
                case 'n': out.append('\n'); break;
                case 't': out.append('\t'); break;
                case 'r': out.append('\r'); break;
                case 'b': out.append('\b'); break;
                case 'f': out.append('\f'); break;
                case 'u': out.append((char) Integer.parseInt(text.substring(at, at + 4), 16)); at += 4; break;
                default: out.append(e); // \" \\ \/
            }
        }
        return out.toString();
    }

    private void space() {
        while (at < text.length() && Character.isWhitespace(text.charAt(at))) at++;
    }

    private boolean take(char c) {
        space();
        if (at < text.length() && text.charAt(at) == c) {
            at++;
            return true;
        }
        return false;
    }

    private void expect(char c) {
        if (!take(c)) throw new IllegalArgumentException("bad JSON: '" + c + "' expected at " + at + ": " + text);
    }

    public static String write(Object value) {
        StringBuilder out = new StringBuilder();
        write(out, value);
        return out.toString();
    }

    private static void write(StringBuilder out, Object value) {
        if (value == null) {
            out.append("null");
        } else if (value instanceof Number || value instanceof Boolean) {
            out.append(value);
        } else if (value instanceof Map) {
            out.append('{');
            String comma = "";
            for (Map.Entry<?, ?> entry : ((Map<?, ?>) value).entrySet()) {
                out.append(comma);
                quote(out, String.valueOf(entry.getKey()));
                out.append(':');
                write(out, entry.getValue());
                comma = ",";
            }
            out.append('}');
        } else if (value instanceof Collection) {
            out.append('[');
            String comma = "";
            for (Object item : (Collection<?>) value) {
                out.append(comma);
                write(out, item);
                comma = ",";
            }
            out.append(']');
        } else {
            quote(out, value.toString());
        }
    }

    private static void quote(StringBuilder out, String s) {
        out.append('"');
        for (char c : s.toCharArray()) {
            if (c == '"' || c == '\\') out.append('\\').append(c);
            else if (c < 0x20) out.append(String.format("\\u%04x", (int) c));
            else out.append(c);
        }
        out.append('"');
    }
}
