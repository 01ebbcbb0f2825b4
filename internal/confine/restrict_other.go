//go:build !linux

package confine

import "errors"

// restrictThread is Linux only; elsewhere New already refuses (there is no Landlock).
func restrictThread(fd int, flags uint32) error {
	return errors.New("confinement needs Linux (Landlock)")
}
