package acpschema

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"fmt"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// Kind selects one of the two embedded schema files.
type Kind int

const (
	// Stable is schema/schema.json: what every ACP peer must accept.
	Stable Kind = iota
	// Unstable is schema/schema.unstable.json: Stable plus the draft methods, fields and variants.
	Unstable
)

func (k Kind) String() string {
	if k == Unstable {
		return "unstable"
	}
	return "stable"
}

//go:embed schema/schema.json
var stableJSON []byte

//go:embed schema/schema.unstable.json
var unstableJSON []byte

// role says which part of a JSON-RPC exchange a `$defs` type describes.
type role int

const (
	roleRequest role = iota
	roleNotification
	roleResult
)

// doc is one compiled schema file. Types are compiled lazily: compiling all 249 `$defs` up front would make
// every test binary pay for types it never checks.
type doc struct {
	url      string
	compiler *jsonschema.Compiler
	methods  map[string][3]string // method → $defs name per role ("" when the method has none)

	mu       sync.Mutex
	compiled map[string]*jsonschema.Schema // Guarded by mu.
}

var (
	docsOnce sync.Once
	docs     [2]*doc
	docsErr  error
)

func load() ([2]*doc, error) {
	docsOnce.Do(func() {
		for i, src := range [][]byte{stableJSON, unstableJSON} {
			d, err := newDoc(Kind(i), src)
			if err != nil {
				docsErr = err
				return
			}
			docs[i] = d
		}
	})
	return docs, docsErr
}

func newDoc(k Kind, src []byte) (*doc, error) {
	url := "file:///acp/" + k.String() + "/schema.json"
	parsed, err := jsonschema.UnmarshalJSON(bytes.NewReader(src))
	if err != nil {
		return nil, fmt.Errorf("acpschema: parse %s schema: %w", k, err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource(url, parsed); err != nil {
		return nil, fmt.Errorf("acpschema: add %s schema: %w", k, err)
	}
	methods, err := methodTable(src)
	if err != nil {
		return nil, fmt.Errorf("acpschema: %s schema: %w", k, err)
	}
	return &doc{url: url, compiler: c, methods: methods, compiled: map[string]*jsonschema.Schema{}}, nil
}

// methodTable reads the `x-method` annotations. A type's role follows from its name, which is how the
// schema is generated: `…Request`, `…Notification`, `…Response`.
func methodTable(src []byte) (map[string][3]string, error) {
	var raw struct {
		Defs map[string]struct {
			Method string `json:"x-method"`
		} `json:"$defs"`
	}
	if err := json.Unmarshal(src, &raw); err != nil {
		return nil, err
	}
	out := map[string][3]string{}
	for name, def := range raw.Defs {
		if def.Method == "" {
			continue
		}
		e := out[def.Method]
		switch {
		case strings.HasSuffix(name, "Request"):
			e[roleRequest] = name
		case strings.HasSuffix(name, "Notification"):
			e[roleNotification] = name
		case strings.HasSuffix(name, "Response"):
			e[roleResult] = name
		default:
			return nil, fmt.Errorf("$defs/%s has x-method %q but no role suffix", name, def.Method)
		}
		out[def.Method] = e
	}
	return out, nil
}

func (d *doc) schema(def string) (*jsonschema.Schema, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if s, ok := d.compiled[def]; ok {
		return s, nil
	}
	s, err := d.compiler.Compile(d.url + "#/$defs/" + def)
	if err != nil {
		return nil, fmt.Errorf("acpschema: compile $defs/%s: %w", def, err)
	}
	d.compiled[def] = s
	return s, nil
}

func getDoc(k Kind) (*doc, error) {
	ds, err := load()
	if err != nil {
		return nil, err
	}
	if k != Stable && k != Unstable {
		return nil, fmt.Errorf("acpschema: unknown schema kind %d", int(k))
	}
	return ds[k], nil
}

// TypeFor returns the `$defs` type that describes method's params (result=false) or result (result=true),
// and whether the schema knows one. For a method that is both a request and a notification (`mcp/message`),
// params resolve to the request type.
func TypeFor(k Kind, method string, result bool) (string, bool) {
	d, err := getDoc(k)
	if err != nil {
		return "", false
	}
	e, ok := d.methods[method]
	if !ok {
		return "", false
	}
	if result {
		return e[roleResult], e[roleResult] != ""
	}
	if e[roleRequest] != "" {
		return e[roleRequest], true
	}
	return e[roleNotification], e[roleNotification] != ""
}

// ValidateDef validates instance against `#/$defs/<def>` of the chosen schema.
func ValidateDef(k Kind, def string, instance []byte) error {
	d, err := getDoc(k)
	if err != nil {
		return err
	}
	s, err := d.schema(def)
	if err != nil {
		return err
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(instance))
	if err != nil {
		return fmt.Errorf("acpschema: %s: not JSON: %w", def, err)
	}
	if err := s.Validate(inst); err != nil {
		return fmt.Errorf("acpschema: %s (%s schema): %w", def, k, err)
	}
	return nil
}

// ValidateParams validates the params of a request or notification by its method.
func ValidateParams(k Kind, method string, params []byte) error {
	def, ok := TypeFor(k, method, false)
	if !ok {
		return fmt.Errorf("acpschema: %s schema has no params type for method %q", k, method)
	}
	return ValidateDef(k, def, params)
}

// ValidateResult validates the result of a successful response to method.
func ValidateResult(k Kind, method string, result []byte) error {
	def, ok := TypeFor(k, method, true)
	if !ok {
		return fmt.Errorf("acpschema: %s schema has no result type for method %q", k, method)
	}
	return ValidateDef(k, def, result)
}
