package events

import (
	"encoding/json"
	"os"
	"strconv"
	"strings"
)

func readFile(p string) ([]byte, error) { return os.ReadFile(p) }

func atoi(s string) int {
	n, _ := strconv.Atoi(s)
	return n
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// isZombie reads the state field of /proc/<pid>/stat ("pid (comm) S ...").
func isZombie(stat []byte) bool {
	s := string(stat)
	i := strings.LastIndexByte(s, ')')
	return i >= 0 && i+2 < len(s) && s[i+2] == 'Z'
}
