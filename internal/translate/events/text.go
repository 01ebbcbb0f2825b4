package events

import (
	"bytes"
	"unicode/utf8"
)

// Text: the answer, thoughts and root errors.
//
// Answer chunks (text_delta, the no-deltas fallback, final suffixes) of one turn share one messageId,
// `<turnId>-answer`, so a client coalesces them into one message even across tool calls. Thoughts
// (reasoning_delta, root iteration_output) get `<turnId>-thought-<n>`, a new n each time a thought follows
// something else. A root error is its own message, `<turnId>-error-<n>`, and is not answer text.
//
// Final-answer dedupe (ACP chunks only append, nothing can be retracted):
//
//   - assistant_message is compared with the answer text streamed since the previous assistant_message
//     (Pixir's per-step canonical message): nothing streamed → the whole text once (no-deltas fallback);
//     the streamed text is a prefix → only the suffix not yet streamed (an exact repeat sends nothing); the
//     final is a prefix of what streamed → nothing.
//   - done.answer is compared the same way with all answer text of the turn (rlmx's EmitDone).
//   - A divergent final (neither is a prefix of the other): the streamed text stands and the final is not
//     appended, because appending it whole would show the answer twice and appending a tail would show a
//     text nobody wrote. The divergence goes out as a non-transcript session_info_update
//     (`_meta.events.finalDiverged`) so it is visible to a client that cares.
//
// Text is never taken from a previous turn: all of this state is reset by BeginTurn.

type textBlock struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

type chunkUpdate struct {
	SessionUpdate string    `json:"sessionUpdate"`
	Content       textBlock `json:"content"`
	MessageID     string    `json:"messageId,omitempty"`
}

// chunks builds one or more chunk updates for text, split at UTF-8 boundaries to MaxChunkBytes.
func (c *Context) chunks(kind, msgID, text string) [][]byte {
	var out [][]byte
	for len(text) > 0 {
		n := len(text)
		if n > c.cfg.MaxChunkBytes {
			n = c.cfg.MaxChunkBytes
			for n > 0 && !utf8.RuneStart(text[n]) {
				n--
			}
			if n == 0 {
				n = c.cfg.MaxChunkBytes
			}
		}
		out = append(out, c.params(marshal(chunkUpdate{SessionUpdate: kind, Content: textBlock{"text", text[:n]}, MessageID: msgID})))
		text = text[n:]
	}
	return out
}

// answer sends text as answer chunks and records it as sent.
func (c *Context) answer(text string) [][]byte {
	if text == "" {
		return nil
	}
	if c.answerID == "" {
		c.answerID = c.turnPrefix() + "-answer"
	}
	c.thoughtID = ""
	c.recordAnswer(text)
	return c.chunks("agent_message_chunk", c.answerID, text)
}

func (c *Context) recordAnswer(text string) {
	if c.answerOverflow || len(c.turnAnswer)+len(text) > maxStreamedBytes {
		c.answerOverflow = true
		c.segment, c.turnAnswer = c.segment[:0], c.turnAnswer[:0]
		c.lastFinalSet = false
		return
	}
	c.lastFinalSet = false
	c.segment = append(c.segment, text...)
	c.turnAnswer = append(c.turnAnswer, text...)
}

func (c *Context) answerDelta(text string) [][]byte { return c.answer(text) }

// thought sends text as thought chunks.
func (c *Context) thought(text string) [][]byte {
	if text == "" {
		return nil
	}
	if c.thoughtID == "" {
		c.thoughtID = c.turnPrefix() + "-thought-" + c.mint()
	}
	return c.chunks("agent_thought_chunk", c.thoughtID, text)
}

// finalSegment handles assistant_message. An assistant_message that repeats the previous one with no
// answer text in between is the same message again, not a new no-deltas step: nothing is sent.
func (c *Context) finalSegment(final string) [][]byte {
	if len(c.segment) == 0 && c.lastFinalSet && final == c.lastFinal {
		return nil
	}
	out := c.dedupe(c.segment, final)
	c.segment = c.segment[:0]
	c.lastFinal, c.lastFinalSet = final, true
	return out
}

// finalTurn handles done.answer.
func (c *Context) finalTurn(final string) [][]byte {
	out := c.dedupe(c.turnAnswer, final)
	c.segment = c.segment[:0]
	return out
}

func (c *Context) dedupe(streamed []byte, final string) [][]byte {
	if c.answerOverflow {
		return nil // too much streamed to compare: the stream stands
	}
	switch {
	case final == "":
		return nil
	case len(streamed) == 0:
		return c.answer(final)
	case len(final) >= len(streamed) && final[:len(streamed)] == string(streamed):
		return c.answer(final[len(streamed):])
	case len(final) < len(streamed) && string(streamed[:len(final)]) == final:
		return nil
	}
	common := 0
	for common < len(final) && common < len(streamed) && final[common] == streamed[common] {
		common++
	}
	meta := map[string]any{"events": map[string]any{"finalDiverged": map[string]any{
		"streamedBytes": len(streamed), "finalBytes": len(final), "commonPrefixBytes": common,
	}}}
	return [][]byte{c.params(marshal(infoUpdate{SessionUpdate: "session_info_update", Meta: meta}))}
}

// rootError sends an error that belongs to no known node as its own message.
func (c *Context) rootError(kind, message string) [][]byte {
	c.thoughtID = ""
	return c.chunks("agent_message_chunk", c.turnPrefix()+"-error-"+c.mint(), errorText(kind, message))
}

func errorText(kind, message string) string {
	if message == "" {
		message = "(no message)"
	}
	if kind == "" {
		kind = "error"
	}
	return kind + ": " + message
}

// cutRunes shortens s to max runes, the last three being "...".
func cutRunes(s string, max int) string {
	if utf8.RuneCountInString(s) <= max {
		return s
	}
	n, i := 0, 0
	for i = range s {
		if n == max-3 {
			break
		}
		n++
	}
	return s[:i] + "..."
}

// oneLine collapses whitespace runs (newlines included) to single spaces and trims.
func oneLine(s string) string {
	var b bytes.Buffer
	space := false
	for _, r := range s {
		if r == ' ' || r == '\n' || r == '\t' || r == '\r' {
			space = b.Len() > 0
			continue
		}
		if space {
			b.WriteByte(' ')
			space = false
		}
		b.WriteRune(r)
	}
	return b.String()
}
