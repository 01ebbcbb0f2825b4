// Package blockcheck checks the embedded JetStream server's block files before the server opens them, and cuts
// a damaged block at its first bad record: the server trusts its blocks, and one damaged sequence number makes
// it allocate without bound.
package blockcheck
