package httpapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"reflect"
	"strings"
	"unicode/utf8"
)

// decodeBody reads a JSON object body into v. An empty body decodes as `{}` so `curl -XPOST` works; unknown
// fields, trailing data, invalid UTF-8 and oversized bodies are errors that name the problem.
func decodeBody(w http.ResponseWriter, r *http.Request, limit int64, v any) error {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, limit))
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return err
		}
		if errors.Is(err, os.ErrDeadlineExceeded) {
			return problem(http.StatusRequestTimeout, "body_timeout", "the request body did not arrive in time")
		}
		return badRequest("reading body: %v", err)
	}
	return decodeJSON(body, v)
}

// decodeJSON is decodeBody without the reading, for fuzzing.
func decodeJSON(body []byte, v any) error {
	body = bytes.TrimSpace(body)
	if len(body) == 0 {
		body = []byte("{}")
	}
	if !utf8.Valid(body) {
		return problem(http.StatusBadRequest, "invalid_json", "body is not valid UTF-8")
	}
	if string(body) == "null" { // json would leave v untouched, as if the client had sent {}
		return badRequest("the body must be a JSON object, not null")
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		var se *json.SyntaxError
		var te *json.UnmarshalTypeError
		switch {
		case errors.As(err, &se):
			return problem(http.StatusBadRequest, "invalid_json", fmt.Sprintf("malformed JSON at byte %d", se.Offset))
		case errors.As(err, &te) && te.Field == "":
			return problem(http.StatusBadRequest, "invalid_json", "the body must be a JSON object, not "+article(te.Value))
		case errors.As(err, &te):
			return problem(http.StatusBadRequest, "invalid_json", fmt.Sprintf("field %q must be %s, not %s", te.Field, article(jsonKind(te.Type)), article(te.Value)))
		case errors.Is(err, io.ErrUnexpectedEOF):
			return problem(http.StatusBadRequest, "invalid_json", "truncated JSON")
		default:
			return problem(http.StatusBadRequest, "invalid_json", err.Error())
		}
	}
	if dec.More() {
		return problem(http.StatusBadRequest, "invalid_json", "trailing data after the JSON object")
	}
	return nil
}

// jsonKind names a Go type the way a JSON client thinks of it: never a Go type name.
func jsonKind(t reflect.Type) string {
	switch t.Kind() {
	case reflect.String:
		return "string"
	case reflect.Bool:
		return "boolean"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64, reflect.Uint, reflect.Uint8,
		reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Float32, reflect.Float64:
		return "number"
	case reflect.Slice, reflect.Array:
		return "array"
	case reflect.Pointer:
		return jsonKind(t.Elem())
	}
	return "object"
}

// article puts "a" or "an" before a JSON kind ("an array", "a string").
func article(kind string) string {
	if kind != "" && strings.ContainsRune("aeiou", rune(kind[0])) {
		return "an " + kind
	}
	return "a " + kind
}
