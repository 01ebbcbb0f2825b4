package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"sync"
	"syscall"

	acp "github.com/coder/acp-go-sdk"
)

// The fs mode plays a hostile agent against the client's fs/* (the gateway serves them itself, confined to the
// session cwd). The prompt text is a JSON array of steps, run in order; the turn's last message chunk is the
// JSON array of their results. Paths are absolute.
//
//	{"op": "read", "path", "line", "limit"}  fs/read_text_file
//	{"op": "read", "path", "times": N, "signalAfter": K}
//	                                         N reads at once; once K of them are answered, "K answered" goes out
//	                                         as a thought chunk (for a test that holds the others until then). The
//	                                         result counts the answers by code ("ok" or the JSON-RPC code).
//	{"op": "write", "path", "content"}       fs/write_text_file
//	{"op": "sparse", "path", "content", "size"}
//	                                         writes content, then extends the file to size bytes without
//	                                         writing them (truncate: a sparse file of zeros)
//	{"op": "link", "from", "path"}           a hard link at path to the file from
//	{"op": "fiforead", "path"}               makes a FIFO at path and asks the client to read it, while a
//	                                         writer of its own waits on the FIFO's other end and writes
//	                                         "fifo-data": a client that opens it blocking meets that writer and
//	                                         answers what it wrote.
//	{"op": "fifowrite", "path", "content"}   the same with a reader of its own and fs/write_text_file; the
//	                                         result's content is what the reader got (set when anything came).
//
// Either FIFO step ends whatever the client did: fiforead releases its writer after the answer by opening
// the read side itself without blocking, and fifowrite's reader never blocks.

type fsStep struct {
	Op          string `json:"op"`
	Path        string `json:"path"`
	From        string `json:"from"`
	Content     string `json:"content"`
	Line        *int   `json:"line"`
	Limit       *int   `json:"limit"`
	Size        int64  `json:"size"`
	Times       int    `json:"times"`
	SignalAfter int    `json:"signalAfter"`
}

type fsResult struct {
	Op      string          `json:"op"`
	Content *string         `json:"content,omitempty"`
	Code    int             `json:"code,omitempty"` // the JSON-RPC error code of the answer
	Data    json.RawMessage `json:"data,omitempty"` // its data
	Answers map[string]int  `json:"answers,omitempty"`
	Err     string          `json:"err,omitempty"` // a failure of the agent's own (not an answer)
}

func (a *agent) fsTurn(ctx context.Context, sid acp.SessionId, text string) (acp.PromptResponse, error) {
	var steps []fsStep
	if err := json.Unmarshal([]byte(text), &steps); err != nil {
		return acp.PromptResponse{}, fmt.Errorf("fs mode: prompt is not a JSON array of steps: %v", err)
	}
	results := make([]fsResult, 0, len(steps))
	for _, st := range steps {
		r := fsResult{Op: st.Op}
		switch st.Op {
		case "read":
			if st.Times > 1 {
				r.Answers = a.readMany(ctx, sid, st)
				break
			}
			res, err := a.conn.ReadTextFile(ctx, acp.ReadTextFileRequest{SessionId: sid, Path: st.Path, Line: st.Line, Limit: st.Limit})
			r.answer(res.Content, err)
		case "write":
			_, err := a.conn.WriteTextFile(ctx, acp.WriteTextFileRequest{SessionId: sid, Path: st.Path, Content: st.Content})
			r.answer("", err)
		case "sparse":
			r.local(sparseFile(st.Path, st.Content, st.Size))
		case "link":
			r.local(os.Link(st.From, st.Path))
		case "fiforead":
			a.fifoRead(ctx, sid, st.Path, &r)
		case "fifowrite":
			a.fifoWrite(ctx, sid, st.Path, st.Content, &r)
		default:
			r.Err = "unknown op " + strconv.Quote(st.Op)
		}
		results = append(results, r)
	}
	out, _ := json.Marshal(results)
	_ = a.update(ctx, sid, acp.UpdateAgentMessageText(string(out)))
	return acp.PromptResponse{StopReason: acp.StopReasonEndTurn}, nil
}

// answer records the client's answer: content when err is nil, else its JSON-RPC error.
func (r *fsResult) answer(content string, err error) {
	var re *acp.RequestError
	switch {
	case errors.As(err, &re):
		r.Code = re.Code
		r.Data, _ = json.Marshal(re.Data)
	case err != nil:
		r.Err = err.Error()
	default:
		r.Content = &content
	}
}

func (r *fsResult) local(err error) {
	if err != nil {
		r.Err = err.Error()
	}
}

// readMany sends st.Times reads at once and counts the answers; once st.SignalAfter of them came back
// (0 = never), it says so in a thought chunk ("K answered"), for a test that holds the others until then.
func (a *agent) readMany(ctx context.Context, sid acp.SessionId, st fsStep) map[string]int {
	answers := make(chan string, st.Times)
	for range st.Times {
		go func() {
			_, err := a.conn.ReadTextFile(ctx, acp.ReadTextFileRequest{SessionId: sid, Path: st.Path, Line: st.Line, Limit: st.Limit})
			var re *acp.RequestError
			switch {
			case err == nil:
				answers <- "ok"
			case errors.As(err, &re):
				answers <- strconv.Itoa(re.Code)
			default:
				answers <- err.Error()
			}
		}()
	}
	counts := map[string]int{}
	for i := range st.Times {
		if i == st.SignalAfter && st.SignalAfter > 0 {
			_ = a.update(ctx, sid, acp.UpdateAgentThoughtText(fmt.Sprintf("%d answered", i)))
		}
		counts[<-answers]++
	}
	return counts
}

func sparseFile(path, content string, size int64) error {
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		return err
	}
	return os.Truncate(path, size)
}

// fifoRead makes a FIFO, waits on its write end and asks the client to read it.
func (a *agent) fifoRead(ctx context.Context, sid acp.SessionId, path string, r *fsResult) {
	if err := syscall.Mkfifo(path, 0o644); err != nil {
		r.Err = err.Error()
		return
	}
	var wg sync.WaitGroup
	wg.Go(func() {
		w, err := os.OpenFile(path, os.O_WRONLY, 0) // blocks until someone opens the FIFO for reading
		if err == nil {
			_, _ = w.WriteString("fifo-data") // EPIPE when the reader has already gone
			_ = w.Close()
		}
	})
	res, err := a.conn.ReadTextFile(ctx, acp.ReadTextFileRequest{SessionId: sid, Path: path})
	r.answer(res.Content, err)
	// Release the writer if nobody met it: a reader that does not block lets its open return.
	if rd, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0); err == nil {
		wg.Wait()
		_ = rd.Close()
	}
	wg.Wait()
}

// fifoWrite makes a FIFO, opens its read end (without blocking, so a writer's open does not block either)
// and asks the client to write content to it; the result's content is what the reader got.
func (a *agent) fifoWrite(ctx context.Context, sid acp.SessionId, path, content string, r *fsResult) {
	if err := syscall.Mkfifo(path, 0o644); err != nil {
		r.Err = err.Error()
		return
	}
	rd, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		r.Err = err.Error()
		return
	}
	defer rd.Close()
	_, werr := a.conn.WriteTextFile(ctx, acp.WriteTextFileRequest{SessionId: sid, Path: path, Content: content})
	r.answer("", werr)
	// The client has answered, so its writer is closed: the read ends at what it wrote (nothing at all when
	// it refused).
	got, err := io.ReadAll(rd)
	if err != nil {
		r.Err = err.Error()
	}
	if werr == nil || len(got) > 0 {
		s := string(got)
		r.Content = &s
	}
}
