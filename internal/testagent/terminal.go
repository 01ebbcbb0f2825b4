package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	acp "github.com/coder/acp-go-sdk"
)

// The term mode drives the client's terminals. The prompt text is a JSON array of steps, run in order on the
// last terminal created; the turn's last message chunk is the JSON array of their results:
//
//	{"op": "create", "command", "args", "cwd", "env", "outputByteLimit"}  terminal/create; also sends an
//	                                                   execute tool_call whose content is {type: terminal}
//	{"op": "output"}                                   terminal/output
//	{"op": "until", "text": "…"}                       terminal/output until the output holds text (10 s)
//	{"op": "wait"}                                     terminal/wait_for_exit
//	{"op": "kill"}                                     terminal/kill
//	{"op": "release"}                                  terminal/release
//	{"op": "exit"}                                     the agent exits at once (status 0)
//	{"op": "read", "path"}                             fs/read_text_file (its result has the content)
//	{"op": "write", "path", "text"}                    fs/write_text_file

type termStep struct {
	Op              string            `json:"op"`
	Command         string            `json:"command"`
	Args            []string          `json:"args"`
	Cwd             *string           `json:"cwd"`
	Env             []acp.EnvVariable `json:"env"`
	OutputByteLimit *int              `json:"outputByteLimit"`
	Text            string            `json:"text"`
	Path            string            `json:"path"`
}

type termResult struct {
	Op         string `json:"op"`
	TerminalID string `json:"terminalId,omitempty"`
	Result     any    `json:"result,omitempty"`
	Error      any    `json:"error,omitempty"`
}

func (a *agent) terminalTurn(ctx context.Context, sid acp.SessionId, text string) (acp.PromptResponse, error) {
	var steps []termStep
	if err := json.Unmarshal([]byte(text), &steps); err != nil {
		return acp.PromptResponse{}, fmt.Errorf("term mode: prompt is not a JSON array of steps: %v", err)
	}
	var results []termResult
	id := ""
	for i, st := range steps {
		r := termResult{Op: st.Op, TerminalID: id}
		var err error
		switch st.Op {
		case "create":
			var res acp.CreateTerminalResponse
			res, err = a.conn.CreateTerminal(ctx, acp.CreateTerminalRequest{
				SessionId: sid, Command: st.Command, Args: st.Args, Cwd: st.Cwd, Env: st.Env, OutputByteLimit: st.OutputByteLimit,
			})
			if err == nil {
				id, r.TerminalID, r.Result = res.TerminalId, res.TerminalId, res
				tc := acp.ToolCallId(fmt.Sprintf("term_call_%d", i))
				_ = a.update(ctx, sid, acp.StartToolCall(tc, "Run "+st.Command, acp.WithStartKind(acp.ToolKindExecute),
					acp.WithStartStatus(acp.ToolCallStatusInProgress), acp.WithStartContent([]acp.ToolCallContent{acp.ToolTerminalRef(id)})))
			}
		case "output":
			r.Result, err = a.conn.TerminalOutput(ctx, acp.TerminalOutputRequest{SessionId: sid, TerminalId: id})
		case "until":
			r.Result, err = a.until(ctx, sid, id, st.Text)
		case "wait":
			r.Result, err = a.conn.WaitForTerminalExit(ctx, acp.WaitForTerminalExitRequest{SessionId: sid, TerminalId: id})
		case "kill":
			r.Result, err = a.conn.KillTerminal(ctx, acp.KillTerminalRequest{SessionId: sid, TerminalId: id})
		case "release":
			r.Result, err = a.conn.ReleaseTerminal(ctx, acp.ReleaseTerminalRequest{SessionId: sid, TerminalId: id})
		case "read":
			r.Result, err = a.conn.ReadTextFile(ctx, acp.ReadTextFileRequest{SessionId: sid, Path: st.Path})
		case "write":
			r.Result, err = a.conn.WriteTextFile(ctx, acp.WriteTextFileRequest{SessionId: sid, Path: st.Path, Content: st.Text})
		case "exit":
			os.Exit(0)
		default:
			err = fmt.Errorf("unknown op %q", st.Op)
		}
		if err != nil {
			r.Result, r.Error = nil, err
		}
		results = append(results, r)
	}
	out, _ := json.Marshal(results)
	_ = a.update(ctx, sid, acp.UpdateAgentMessageText(string(out)))
	return acp.PromptResponse{StopReason: acp.StopReasonEndTurn}, nil
}

// until polls terminal/output until the output holds text, for at most 10 s.
func (a *agent) until(ctx context.Context, sid acp.SessionId, id, text string) (acp.TerminalOutputResponse, error) {
	deadline := time.Now().Add(10 * time.Second)
	for {
		res, err := a.conn.TerminalOutput(ctx, acp.TerminalOutputRequest{SessionId: sid, TerminalId: id})
		if err != nil || strings.Contains(res.Output, text) {
			return res, err
		}
		if time.Now().After(deadline) {
			return res, fmt.Errorf("output never held %q", text)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// printer is the -print mode, the command the terminal tests run: it prints NAME=value for each -getenv
// name ("cwd": its working directory), -print (repeated -repeat times) on stdout and -stderr on stderr, its pid when -print-pid, ignores SIGTERM with -ignore-term (after saying
// "ready"), sleeps -sleep seconds and exits with -exit.
func printer(text string, repeat int, stderr, getenv string, printPid, ignoreTerm bool, sleep, exit int) {
	if getenv != "" {
		for _, k := range strings.Split(getenv, ",") {
			v := os.Getenv(k)
			if k == "cwd" {
				v, _ = os.Getwd()
			}
			fmt.Printf("%s=%s\n", k, v)
		}
	}
	if ignoreTerm {
		signalIgnoreTerm()
	}
	if printPid {
		fmt.Printf("pid %d\n", os.Getpid())
	}
	fmt.Print(strings.Repeat(text, max(repeat, 1)))
	if stderr != "" {
		fmt.Fprint(os.Stderr, stderr)
	}
	if ignoreTerm {
		fmt.Println("ready")
	}
	if sleep > 0 {
		time.Sleep(time.Duration(sleep) * time.Second)
	}
	os.Exit(exit)
}

func signalIgnoreTerm() { signal.Ignore(syscall.SIGTERM) }

// tryAccess is a terminal command that reports, one line per path, what reading (a file's contents, a
// directory's names) or writing each one gave: "ok <path>: <contents>" or "denied <path>: <error>".
func tryAccess(readPaths, writePath string) {
	for _, p := range strings.Split(readPaths, ",") {
		if p == "" {
			continue
		}
		var text string
		data, err := os.ReadFile(p)
		if errors.Is(err, syscall.EISDIR) {
			var names []string
			names, err = readDirNames(p)
			text = strings.Join(names, " ")
		} else {
			text = strings.ReplaceAll(string(data), "\x00", " ")
		}
		if err != nil {
			fmt.Printf("denied %s: %v\n", p, err)
		} else {
			fmt.Printf("ok %s: %q\n", p, text)
		}
	}
	if writePath != "" {
		if err := os.WriteFile(writePath, []byte("written"), 0o600); err != nil {
			fmt.Printf("denied %s: %v\n", writePath, err)
		} else {
			fmt.Printf("ok %s: written\n", writePath)
		}
	}
}

func readDirNames(dir string) ([]string, error) {
	f, err := os.Open(dir)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return f.Readdirnames(-1)
}
