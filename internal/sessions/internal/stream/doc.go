// Package stream is how a subscriber reads a session: where its stream starts (Start), the loop that sends
// it the log, the pending requests after the replay and the gateway's own notes (Follow), and who streams
// the session now (Presence). It reads the session only through Source.
package stream
