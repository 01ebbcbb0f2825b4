package inproc

import (
	"errors"
	"io"
	"strings"
	"testing"
	"testing/synctest"
)

func TestGatedReader(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newGatedReader(strings.NewReader("hi"))
		got := make(chan []byte, 1)
		go func() {
			b, _ := io.ReadAll(r)
			got <- b
		}()
		synctest.Wait()
		if len(got) != 0 {
			t.Fatal("read before open")
		}
		r.open()
		if b := <-got; string(b) != "hi" {
			t.Fatalf("read %q", b)
		}
		if !errors.Is(r.err(), io.EOF) {
			t.Fatalf("err = %v, want EOF", r.err())
		}
	})
}

// errsReader returns its errors in turn, one per Read.
type errsReader struct{ errs []error }

func (r *errsReader) Read([]byte) (int, error) {
	err := r.errs[0]
	if len(r.errs) > 1 {
		r.errs = r.errs[1:]
	}
	return 0, err
}

func TestGatedReaderKeepsFirstError(t *testing.T) {
	boom := errors.New("boom")
	r := newGatedReader(&errsReader{errs: []error{boom, io.EOF}})
	r.open()
	if r.err() != nil {
		t.Fatalf("err = %v before any read", r.err())
	}
	for range 2 {
		_, _ = r.Read(make([]byte, 1))
	}
	if r.err() != boom {
		t.Fatalf("err = %v, want the first error %v", r.err(), boom)
	}
}
