package main

import (
	"context"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A fast restart (docs/cluster.md §6): a supervisor restarts a killed owner with the same --node-id before the
// other nodes noticed the loss. The restarted process claims its node id when the old key expires, which is
// when the others start taking its sessions over, so its recovery and their takeovers race for the same
// entries. Whatever the delay, every session must end detached and be served alike by every node.

// fastRestartSessions is how many sessions the owner holds when it is killed: half idle, half in a turn that
// waits on a permission.
const fastRestartSessions = 8

// nodeLostRE matches the line a node logs when it starts handling another node's loss.
var nodeLostRE = regexp.MustCompile(`msg="node lost" node=a `)

// TestClusterFastRestart kills the owner of 8 sessions (SIGKILL) and restarts it with the same node id after
// each delay a supervisor may take: at once, 0.5 s, 2.5 s, 4.5 s, and the moment b starts handling the loss.
func TestClusterFastRestart(t *testing.T) {
	gws, nodes := clusterGateways(t)
	rounds := []struct {
		name string
		wait func(t *testing.T, b *gateway, lossesBefore int)
	}{
		{"right after the kill", func(*testing.T, *gateway, int) {}},
		{"0.5 s after the kill", supervisorDelay(500 * time.Millisecond)},
		{"2.5 s after the kill", supervisorDelay(2500 * time.Millisecond)},
		{"4.5 s after the kill", supervisorDelay(4500 * time.Millisecond)},
		{"when b starts handling the loss", func(t *testing.T, b *gateway, lossesBefore int) {
			waitUntil(t, "b handling a's loss", 30*time.Second, func() bool {
				return len(nodeLostRE.FindAllStringIndex(b.logs.String(), -1)) > lossesBefore
			})
		}},
	}
	for _, rd := range rounds {
		fastRestartRound(t, rd.name, gws, nodes, rd.wait)
	}
}

// supervisorDelay is a supervisor's restart delay: a sleep that makes the delay, not one that waits for a state.
func supervisorDelay(d time.Duration) func(*testing.T, *gateway, int) {
	return func(*testing.T, *gateway, int) { time.Sleep(d) }
}

// fastRestartRound runs one kill and restart of a. Its gateways live as long as t: a round is not a subtest,
// whose end would kill the restarted a.
func fastRestartRound(t *testing.T, name string, gws []*gateway, nodes []*clusterNode, wait func(*testing.T, *gateway, int)) {
	a, b, c := gws[0], gws[1], gws[2]
	ids := make([]string, fastRestartSessions)
	for i := range ids {
		s := a.createSession(map[string]any{"permissionPolicy": "ask"})
		ids[i] = s.ID
		if i%2 == 1 {
			if code := a.do("POST", "/v1/sessions/"+s.ID+"/prompt", `{"prompt":[{"type":"text","text":"refactor the parser"}]}`, nil); code != http.StatusAccepted {
				t.Fatalf("%s: prompt: %d", name, code)
			}
		}
	}
	// Every session is known on b and c (their followers), and the turns wait on their permissions.
	for i, id := range ids {
		for _, g := range []*gateway{a, b, c} {
			waitUntil(t, name+": session "+id+" on "+g.base, 30*time.Second, func() bool {
				var v sessionJSON
				if g.do("GET", "/v1/sessions/"+id, nil, &v) != http.StatusOK {
					return false
				}
				return i%2 == 0 || len(v.PendingPermissions) == 1
			})
		}
	}

	losses := len(nodeLostRE.FindAllStringIndex(b.logs.String(), -1))
	if err := nodes[0].cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-nodes[0].exited
	wait(t, b, losses)
	a2, cmd, exited := startChildGateway(t, nodes[0].args...)
	nodes[0].cmd, nodes[0].exited = cmd, exited
	gws[0] = a2

	// Every session ends detached, with the same status and reason on every node; a answers for each.
	var last string
	settled := func() bool {
		var b strings.Builder
		ok := true
		for _, id := range ids {
			var states []string
			for _, g := range gws {
				var v map[string]any // a problem's status is a number
				code := g.do("GET", "/v1/sessions/"+id, nil, &v)
				states = append(states, fmt.Sprintf("%d %v/%v", code, v["status"], v["statusReason"]))
			}
			same := states[0] == states[1] && states[1] == states[2]
			if !same || !strings.HasPrefix(states[0], "200 detached/") {
				ok = false
			}
			fmt.Fprintf(&b, "\n  %s: a %s | b %s | c %s", id, states[0], states[1], states[2])
		}
		last = b.String()
		return ok
	}
	deadline := time.Now().Add(60 * time.Second)
	for !settled() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not every session ended detached on every node:%s\na's log:\n%s", name, last, sessionLines(a2.logs.String()))
		}
		time.Sleep(50 * time.Millisecond)
	}
	logs := a2.logs.String()
	t.Logf("%s: every session detached on every node (a waited for %d takeovers in progress):%s", name,
		strings.Count(logs, "waiting for another node's takeover"), last)

	// Detached means re-attachable: a prompt through b runs a turn on the restarted a.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var res struct{ StopReason string }
	if code, body, err := b.httpDo(ctx, "POST", "/v1/sessions/"+ids[1]+"/prompt?wait=true", map[string]string{"text": "quick"}, &res); err != nil || code != http.StatusOK || res.StopReason != "end_turn" {
		t.Fatalf("%s: prompt through b after the restart: %d %v %s", name, code, err, body)
	}
}

// sessionLines is the lines of a gateway's log about its sessions, without its request log.
func sessionLines(s string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, "session") && !strings.Contains(l, "msg=request ") {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}
