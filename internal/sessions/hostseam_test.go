package sessions

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path"
	"strings"
	"testing"
)

// coreFiles are the session core: the files that reach the registry only through Host (host.go), so that
// they can move to a package of their own.
var coreFiles = []string{
	"host.go", "session.go", "turn.go", "turnwait.go", "permission.go", "elicitation.go", "status.go",
	"restore.go", "view.go", "stream.go", "presence.go", "share.go", "owner.go", "usage.go", "epochchain.go",
	"noise.go", "quiet.go", "fs.go", "fs_delegate.go", "fs_local.go", "terminal.go", "rename.go", "files.go",
}

// TestCoreNamesNoRegistry: no core file names the Registry, its Config, or the link the files outside the
// core use (registry_host.go), except the Session struct that embeds that link for them.
func TestCoreNamesNoRegistry(t *testing.T) {
	banned := map[string]bool{"Registry": true, "Config": true, "registryLink": true, "reg": true}
	fset := token.NewFileSet()
	for _, name := range coreFiles {
		f, err := parser.ParseFile(fset, name, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.SelectorExpr:
				if pkg, ok := n.X.(*ast.Ident); ok && imports(f, pkg.Name) {
					return false // translate.Config and the like are other packages' names
				}
			case *ast.Field:
				if name == "session.go" && len(n.Names) == 0 && isIdent(n.Type, "registryLink") {
					return false // the embedded link itself, for the files outside the core
				}
			case *ast.Ident:
				if banned[n.Name] {
					t.Errorf("%s: names %s", fset.Position(n.Pos()), n.Name)
				}
			}
			return true
		})
	}
}

// imports reports whether f imports a package under name.
func imports(f *ast.File, name string) bool {
	for _, im := range f.Imports {
		p := strings.Trim(im.Path.Value, `"`)
		if im.Name != nil && im.Name.Name == name || im.Name == nil && path.Base(p) == name {
			return true
		}
	}
	return false
}

func isIdent(e ast.Expr, name string) bool {
	id, ok := e.(*ast.Ident)
	return ok && id.Name == name
}
