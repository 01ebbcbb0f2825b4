package acpws

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/acp-gateway/gateway/internal/sessions"
)

var updateGolden = flag.Bool("update", false, "rewrite testdata/*.golden")

// goldenUpdates are agent session/update params the demo agent never sends, each marked by its text: the
// frames whose forwarding the writer decides by reading them (whose turn, which kind, malformed members).
// Spellings that encoding/json matches loosely are there on purpose: folded keys, escaped values, duplicate
// members (the last wins), members of the wrong type, whitespace.
var goldenUpdates = []string{
	`{"sessionId":"x","update":{"sessionUpdate":"user_message_chunk","content":{"type":"text","text":"g01 plain user chunk"}}}`,
	`{"sessionId":"x","update":{"sessionUpdate":"user\u005fmessage_chunk","content":{"type":"text","text":"g02 escaped kind"}}}`,
	`{"sessionId":"x","update":{"SessionUpdate":"user_message_chunk","content":{"type":"text","text":"g03 folded key"}}}`,
	"{ \"sessionId\" : \"x\" ,\n \"update\" : { \"sessionUpdate\" : \"user_message_chunk\" , \"content\" : {\"type\":\"text\",\"text\":\"g04 whitespace\"} } }",
	`{"sessionId":"x","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"g05 duplicate, user last"},"sessionUpdate":"user_message_chunk"}}`,
	`{"sessionId":"x","update":{"sessionUpdate":"user_message_chunk","content":{"type":"text","text":"g06 duplicate, agent last"},"sessionUpdate":"agent_message_chunk"}}`,
	`{"sessionId":"x","permissionId":5,"update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"g07 permissionId of the wrong type"}}}`,
	`{"sessionId":"x","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"g08 \"quoted\" \\ \u00e9 é \ud83d\ude00"}}}`,
	`{"sessionId":"x","_meta":{"Gateway":{"turnId":7}},"update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"g09 folded gateway key, turnId a number"}}}`,
	`{"sessionId":"x","update":{"sessionUpdate":null,"content":{"type":"text","text":"g10 null kind"}}}`,
	`{"sessionId":"x","update":{"sessionUpdate":5,"content":{"type":"text","text":"g11 kind a number"}}}`,
	`{"sessionId":"x","_meta":{"gateway":{"turnId":"someone-else"}},"update":{"sessionUpdate":"user_message_chunk","content":{"type":"text","text":"g12 agent's own gateway meta"}}}`,
	`{"sessionId":"x","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"g13","sessionUpdate":"user_message_chunk"}}}`,
	`{"sessionId":"x","update":{"ſessionUpdate":"user_message_chunk","content":{"type":"text","text":"g14 key folded by Unicode"}}}`,
	`{"sessionId":"x","update":{"sessionUpdate":"tool_call","toolCallId":"g15","title":"tool","status":"pending"}}`,
	`{"sessionId":"x","_meta":{"a":1},"update":{"sessionUpdate":"user_message_chunk","content":{"type":"text","text":"g16 params meta"}},"_meta":{"b":2}}`,
	`{"sessionId":"x","update":{"sessionUpdate":"mystery_variant","x":[1,{"y":"z"}],"content":{"type":"text","text":"g17 unknown variant"}}}`,
	`{"sessionId":"x","update":{"sessionUpdate":"user_message_chunk","content":{"type":"text","text":"g18 trailing meta"},"_meta":{"gateway":{"turnId":"nobody"}}}}`,
	`{"sessionId":"x","Method":"other","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"g19 folded method key in params"}}}`,
	`{"sessionId":"x","params":{},"update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"g20"}},"update":{"content":{"type":"text","text":"g20 second update object"}}}`,
}

// TestACPFloodGolden holds the bytes two `/acp` clients receive, in order, for a turn of the demo agent with
// goldenUpdates logged before it and while its permission request is pending (so stamped with its turn): the
// prompting client (its own prompt and its own turn's user chunks are not echoed; it answers the permission)
// and a client attached with session/resume (it sees the request withdrawn). An update's kind is the one the
// session read when it logged it, with exact keys as a JSON.parse client reads them: a folded `SessionUpdate`
// is no user chunk, and a member of the wrong type drops nothing. Ids, the epoch, deadlines and the working
// directory are replaced by placeholders. `go test -run TestACPFloodGolden -args -update` rewrites the file.
func TestACPFloodGolden(t *testing.T) {
	e := newEnv(t, Options{})
	a := e.dial("/acp")
	a.initialize()
	sid := a.newSession(e.dir)
	s, err := e.reg.Get(sid)
	if err != nil {
		t.Fatal(err)
	}
	var gotA, gotB []msg
	readUntil := func(cl *client, got *[]msg, stop func(msg) bool) msg {
		t.Helper()
		for {
			m := cl.next()
			*got = append(*got, m)
			if stop(m) {
				return m
			}
		}
	}
	isKind := func(k string) func(msg) bool { return func(m msg) bool { return m.update() == k } }
	isMethod := func(k string) func(msg) bool { return func(m msg) bool { return m.Method == k } }
	logAll := func(s *sessions.Session) {
		for _, p := range goldenUpdates {
			s.SessionUpdate([]byte(p))
		}
	}
	readUntil(a, &gotA, isKind("available_commands_update")) // sent after session/new's answer: after session_ready (seq 1), which /acp does not send

	b := e.dial("/acp")
	b.initialize()
	b.mustResult("session/resume", map[string]any{"sessionId": sid, "cwd": e.dir, "mcpServers": []any{}}, nil)

	logAll(s) // no turn
	promptID := a.request("session/prompt", textPrompt(sid, "hello gateway"))
	perm := readUntil(a, &gotA, isMethod("session/request_permission"))
	readUntil(b, &gotB, isMethod("session/request_permission"))
	logAll(s) // A's turn: stamped with its turnId
	a.answer(perm, "allow-once")
	readUntil(a, &gotA, func(m msg) bool { return m.isResponse() && string(m.ID) == string(promptID) })
	s.SessionUpdate([]byte(`{"sessionId":"x","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"golden end"}}}`))
	isEnd := func(m msg) bool { return bytes.Contains(m.raw, []byte("golden end")) }
	readUntil(a, &gotA, isEnd)
	readUntil(b, &gotB, isEnd)

	var out bytes.Buffer
	norm := newNormalizer(e.dir)
	for _, part := range []struct {
		name string
		msgs []msg
	}{{"prompting client", gotA}, {"resumed client", gotB}} {
		fmt.Fprintf(&out, "# %s: %d messages\n", part.name, len(part.msgs))
		for _, m := range part.msgs {
			out.Write(norm.apply(m.raw))
			out.WriteByte('\n')
		}
	}
	path := filepath.Join("testdata", "acp_flood.golden")
	if *updateGolden {
		if err := os.WriteFile(path, out.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(out.Bytes(), want) {
		gotLines, wantLines := bytes.Split(out.Bytes(), []byte("\n")), bytes.Split(want, []byte("\n"))
		for i := range max(len(gotLines), len(wantLines)) {
			var g, w []byte
			if i < len(gotLines) {
				g = gotLines[i]
			}
			if i < len(wantLines) {
				w = wantLines[i]
			}
			if !bytes.Equal(g, w) {
				t.Fatalf("line %d differs from %s:\n got: %s\nwant: %s", i+1, path, g, w)
			}
		}
	}
}

// normalizer replaces what differs from run to run (ids, the working directory, deadlines) by placeholders numbered in
// order of first appearance.
type normalizer struct {
	dir  string
	seen map[string]string
}

var (
	uuidLike     = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)
	deadlineLike = regexp.MustCompile(`"deadline":"[^"]*"`)
)

func newNormalizer(dir string) *normalizer { return &normalizer{dir: dir, seen: map[string]string{}} }

func (n *normalizer) apply(b []byte) []byte {
	b = bytes.ReplaceAll(b, []byte(n.dir), []byte("<cwd>"))
	b = deadlineLike.ReplaceAll(b, []byte(`"deadline":"<time>"`))
	return uuidLike.ReplaceAllFunc(b, func(id []byte) []byte {
		p, ok := n.seen[string(id)]
		if !ok {
			p = fmt.Sprintf("<id%d>", len(n.seen)+1)
			n.seen[string(id)] = p
		}
		return []byte(p)
	})
}
