package httpapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
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
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		var se *json.SyntaxError
		var te *json.UnmarshalTypeError
		switch {
		case errors.As(err, &se):
			return problem(http.StatusBadRequest, "invalid_json", fmt.Sprintf("malformed JSON at byte %d", se.Offset))
		case errors.As(err, &te):
			return problem(http.StatusBadRequest, "invalid_json", fmt.Sprintf("field %q must be %s", te.Field, te.Type))
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
