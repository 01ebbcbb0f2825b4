// Package rawjson reads and rewrites JSON values as raw bytes, without decoding them: it scans an object's
// top-level members, bounds a value to a byte budget, redacts secrets inside its strings, and replaces
// invalid UTF-8. It exists apart from translate because the faces and the session core need the same
// sanitising (EchoID, ValidUTF8, RedactText) without the translation state, and it imports nothing of the
// project.
package rawjson
