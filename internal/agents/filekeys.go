package agents

import (
	"reflect"
	"strings"
)

// FileKeys lists the keys an agents-file entry accepts, read from the parser's own struct so that the
// gateway's --help (which describes each) cannot drift from what is parsed.
func FileKeys() []string {
	entry := reflect.TypeFor[agentServersFile]().Field(0).Type.Elem()
	keys := make([]string, 0, entry.NumField())
	for i := range entry.NumField() {
		name, _, _ := strings.Cut(entry.Field(i).Tag.Get("json"), ",")
		if name != "" && name != "-" {
			keys = append(keys, name)
		}
	}
	return keys
}
