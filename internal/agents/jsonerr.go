package agents

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"unicode/utf8"
)

// describeJSONError says where in data a decoding error is (line and column, 1-based, columns in
// characters) and, for a value of the wrong type, which key wants what: an operator fixes a hand-written
// file by position, not by byte offset or Go type.
func describeJSONError(data []byte, err error) error {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syn):
		pos := int(syn.Offset) - 1 // the byte that did not fit
		if strings.Contains(syn.Error(), "unexpected end") {
			pos = len(data) // the document stopped early: point past its end
		}
		line, col := lineCol(data, pos)
		return fmt.Errorf("line %d, column %d: %s", line, col, syn.Error())
	case errors.As(err, &typ):
		line, col := lineCol(data, int(typ.Offset)-1)
		key := typ.Field
		if i := strings.LastIndex(key, "."); i >= 0 {
			key = key[i+1:]
		}
		return fmt.Errorf("line %d, column %d: %q must be %s, not %s", line, col, key, jsonKind(typ.Type), article(typ.Value))
	}
	return err
}

// lineCol turns a byte position into a line and a column, both from 1.
func lineCol(data []byte, pos int) (line, col int) {
	pos = max(0, min(pos, len(data)))
	before := data[:pos]
	start := bytes.LastIndexByte(before, '\n') + 1
	return bytes.Count(before, []byte{'\n'}) + 1, utf8.RuneCount(before[start:]) + 1
}

// jsonKind names the JSON shape a Go type decodes from.
func jsonKind(t reflect.Type) string {
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Slice, reflect.Array:
		return "an array of " + strings.TrimPrefix(strings.TrimPrefix(jsonKind(t.Elem()), "a "), "an ") + "s"
	case reflect.Map, reflect.Struct:
		return "an object"
	case reflect.Bool:
		return "true or false"
	default:
		return "a number"
	}
}

// article puts "a" or "an" before the JSON value kind encoding/json reports ("string", "array", "number 5").
func article(v string) string {
	if v != "" && strings.ContainsRune("aeiou", rune(v[0])) {
		return "an " + v
	}
	return "a " + v
}
