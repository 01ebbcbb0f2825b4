package services

import (
	"errors"
	"testing"
	"unicode/utf8"

	"github.com/acp-gateway/gateway/internal/sessionerr"
)

// FuzzFilesOptionsCheck feeds arbitrary queries and limits to the file listing's check: it refuses with
// ErrBadRequest, or leaves a query of valid UTF-8 within MaxFileQuery and a limit in 1..MaxFileLimit.
func FuzzFilesOptionsCheck(f *testing.F) {
	f.Add("", 0)
	f.Add("main.go", 50)
	f.Add("../../etc/passwd", 200)
	f.Add("\xff", 1)
	f.Add("a\x00b", 201)
	f.Add("", -1)
	f.Add(string(make([]byte, MaxFileQuery+1)), 10)
	f.Fuzz(func(t *testing.T, q string, limit int) {
		o := FilesOptions{Query: q, Limit: limit}
		err := o.Check()
		if err != nil {
			if !errors.Is(err, sessionerr.ErrBadRequest) {
				t.Fatalf("error %v is not sessionerr.ErrBadRequest", err)
			}
			return
		}
		if o.Query != q || len(q) > MaxFileQuery || !utf8.ValidString(q) {
			t.Fatalf("query %q accepted as %q", q, o.Query)
		}
		if o.Limit < 1 || o.Limit > MaxFileLimit || (limit != 0 && o.Limit != limit) || (limit == 0 && o.Limit != DefaultFileLimit) {
			t.Fatalf("limit %d accepted as %d", limit, o.Limit)
		}
	})
}
