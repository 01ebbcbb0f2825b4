package httpapi

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/coder/websocket"
	"github.com/go-chi/chi/v5"
)

// FuzzDecodeLoginMessage feeds arbitrary frames to the login socket's decoder: it accepts only a text frame
// holding an input or a resize of 1 to maxLoginTermSize columns and rows, and what it accepts encodes and
// decodes back to itself.
func FuzzDecodeLoginMessage(f *testing.F) {
	for _, s := range []string{`{"type":"input","data":"4242-7171\r"}`, `{"type":"input","data":"\u0003"}`, `{"type":"resize","cols":80,"rows":24}`,
		`{"type":"resize","cols":0,"rows":24}`, `{"type":"resize","cols":5000,"rows":24}`, `{"type":"resize","cols":-1}`, `{"type":"exit"}`,
		`{"type":"input","data":"x"} {}`, `{"type":1}`, `null`, `[]`, "{\"type\":\"input\",\"data\":\"\xff\"}", ``} {
		f.Add(true, []byte(s))
	}
	f.Add(false, []byte{3})
	f.Fuzz(func(t *testing.T, text bool, data []byte) {
		typ := websocket.MessageBinary
		if text {
			typ = websocket.MessageText
		}
		msg, ok := decodeLoginMessage(typ, data)
		if !ok {
			return
		}
		switch {
		case !text:
			t.Fatalf("binary frame %q accepted", data)
		case msg.Type == "resize" && (msg.Cols < 1 || msg.Cols > maxLoginTermSize || msg.Rows < 1 || msg.Rows > maxLoginTermSize):
			t.Fatalf("resize to %dx%d accepted", msg.Cols, msg.Rows)
		case msg.Type != "resize" && msg.Type != "input":
			t.Fatalf("type %q accepted", msg.Type)
		}
		b, err := json.Marshal(msg)
		if err != nil {
			t.Fatal(err)
		}
		if again, ok := decodeLoginMessage(websocket.MessageText, b); !ok || again != msg {
			t.Fatalf("%+v re-encoded as %s decodes as %+v, %v", msg, b, again, ok)
		}
	})
}

// FuzzLoginCallbackTarget routes arbitrary callback URLs through the login routes' pattern: a port is accepted
// only in 1..65535, and the path forwarded to the login command is, byte for byte, the escaped path the
// browser sent after the port.
func FuzzLoginCallbackTarget(f *testing.F) {
	for _, s := range [][2]string{{"38217", "callback?code=4242"}, {"8080", "%63allback"}, {"8080", "a%2Fb/c"}, {"8080", "..%2F..%2Fv1%2Fsessions"},
		{"8080", "../../x"}, {"0", "x"}, {"65536", "x"}, {"+80", "x"}, {"-1", "x"}, {"99999999999999999999", "x"}, {"80", "caf%C3%A9/%20x"},
		{"80", "%00"}, {"80", ""}, {"80", "a%zz"}} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, port, rest string) {
		req, err := http.NewRequest(http.MethodGet, "http://gw/v1/agents/a/login/terminal/id/callback/"+port+"/"+rest, nil)
		if err != nil || req.URL.Host != "gw" || (req.URL.RawPath != "" && req.URL.EscapedPath() != req.URL.RawPath) {
			t.Skip() // not a request target a server would read (a space, a byte a request line cannot hold)
		}
		prefix := "/v1/agents/a/login/terminal/id/callback/"
		var got *url.URL
		var gotErr error
		r := chi.NewRouter()
		r.Get("/v1/agents/{agent}/login/terminal/{loginId}/callback/{port}/*", func(w http.ResponseWriter, r *http.Request) {
			p, err := callbackPort(chi.URLParam(r, "port"))
			if err == nil && (p < 1 || p > 65535) {
				t.Fatalf("port %q accepted as %d", chi.URLParam(r, "port"), p)
			}
			path, raw, err := callbackPath(chi.URLParam(r, "*"), r.URL.RawPath != "")
			got, gotErr = &url.URL{Path: path, RawPath: raw}, err
		})
		r.ServeHTTP(httptest.NewRecorder(), req)
		if got == nil {
			return // the pattern did not match: a 404 of the router
		}
		if gotErr != nil {
			var p *Problem
			if !errors.As(gotErr, &p) || p.Status != http.StatusBadRequest {
				t.Fatalf("callback path error %v is not a 400", gotErr)
			}
			return
		}
		sent := req.URL.EscapedPath()
		i := strings.Index(sent[len(prefix):], "/")
		if want := sent[len(prefix)+i:]; got.EscapedPath() != want {
			t.Fatalf("the browser sent %q after the port; the login command gets %q", want, got.EscapedPath())
		}
	})
}
