package main

import (
	"bytes"
	"encoding/json"
	"errors"
)

// The page client splits a page into its frames the way the other clients split a stream: by finding where
// each frame ends, not by decoding it. Decoding every page with encoding/json cost the client a third more
// CPU per update (profiled: 20.5 µs against 14.8), on the cores the agent and the gateway share.

var pageHead = []byte(`{"frames":[`)

// splitPage returns the frames of an events page (views into b) and its metadata. A page not laid out as the
// gateway writes it (`{"frames":[…],…}`) is decoded with encoding/json instead.
func splitPage(b []byte, frames [][]byte) ([][]byte, eventsPage, error) {
	var p eventsPage
	base := len(frames)
	if !bytes.HasPrefix(b, pageHead) {
		return decodePage(b, frames)
	}
	i := len(pageHead)
	for i < len(b) && b[i] != ']' {
		end, ok := objectEnd(b, i)
		if !ok {
			return decodePage(b, frames[:base])
		}
		frames = append(frames, b[i:end])
		i = end
		if i < len(b) && b[i] == ',' && i+1 < len(b) && b[i+1] == '{' {
			i++
		} else if i >= len(b) || b[i] != ']' {
			return decodePage(b, frames[:base]) // not `,{` or `]` after a frame
		}
	}
	// The rest is `],"epoch":…}`: decode it as an object of its own.
	i++
	if i+1 >= len(b) || b[i] != ',' || b[i+1] != '"' {
		return decodePage(b, frames[:base])
	}
	meta := append([]byte{'{'}, b[i+1:]...)
	if err := json.Unmarshal(meta, &p); err != nil {
		return nil, p, err
	}
	return frames, p, nil
}

// objectEnd is the index just past the JSON object that starts at b[i], tracking strings and nesting only
// (the gateway has validated every frame).
func objectEnd(b []byte, i int) (int, bool) {
	if i >= len(b) || b[i] != '{' {
		return 0, false
	}
	depth := 0
	for i < len(b) {
		switch b[i] {
		case '"':
			i++
			for {
				j := bytes.IndexAny(b[i:], `"\`)
				if j < 0 {
					return 0, false
				}
				i += j
				if b[i] == '"' {
					break
				}
				if i += 2; i >= len(b) { // a backslash and the byte it escapes
					return 0, false
				}
			}
		case '{', '[':
			depth++
		case '}', ']':
			depth--
			if depth == 0 {
				return i + 1, true
			}
		}
		i++
	}
	return 0, false
}

var errNotPage = errors.New("events page: not a JSON object with frames")

func decodePage(b []byte, frames [][]byte) ([][]byte, eventsPage, error) {
	var p struct {
		Frames  []json.RawMessage `json:"frames"`
		LastSeq uint64            `json:"lastSeq"`
		Closed  bool              `json:"closed"`
	}
	if err := json.Unmarshal(b, &p); err != nil {
		return nil, eventsPage{}, err
	}
	if p.Frames == nil {
		return nil, eventsPage{}, errNotPage
	}
	for _, f := range p.Frames {
		frames = append(frames, f)
	}
	return frames, eventsPage{LastSeq: p.LastSeq, Closed: p.Closed}, nil
}
