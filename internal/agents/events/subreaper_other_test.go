//go:build !linux

package events

func becomeSubreaper() error { return nil }
