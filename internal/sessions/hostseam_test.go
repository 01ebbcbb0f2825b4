package sessions

import (
	"go/ast"
	"go/parser"
	"go/token"
	"go/types"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// coreFiles are the session core: they use nothing declared in the package's other files, so that they can
// move to a package of their own. They reach the registry through Host (host.go), and the store and the
// owner through the runner (runner.go).
var coreFiles = []string{
	"acp_support.go", "agentsecrets.go", "cold.go", "deletion.go", "elicitation.go", "epochchain.go", "files.go",
	"framekind.go", "fs.go", "fs_delegate.go", "fs_local.go", "host.go", "loginerr.go", "mcpattach.go", "noise.go", "owner.go",
	"permission.go", "policy.go", "presence.go", "promptkey.go", "promptsize.go", "quiet.go", "rename.go",
	"restore.go", "runner.go", "session.go", "share.go", "status.go", "stream.go", "terminal.go", "turn.go",
	"turnwait.go", "usage.go", "view.go",
	"agentstate.go", "closestate.go", "coldentry.go", "control.go", "testhooks.go", "copyfold.go", "copypause.go", "detachstate.go", "direntry.go",
	"forkstate.go", "fsoffer.go", "localprompt.go", "lock.go", "logclose.go", "mcpstate.go", "reattachcheck.go",
	"reattachstate.go", "roleseam.go", "sharestate.go", "standdown.go", "static.go", "storedload.go",
}

// TestCoreUsesNothingOutside type-checks the package and fails on any name a core file uses that another
// file of the package declares, and on any method of *Session declared outside the core.
func TestCoreUsesNothingOutside(t *testing.T) {
	fset, files, info, pkg := typeCheckPackage(t)
	isCore := func(pos token.Pos) bool { return slices.Contains(coreFiles, fset.File(pos).Name()) }
	resolved := 0
	for id, obj := range info.Uses {
		if obj.Pkg() != pkg || !obj.Pos().IsValid() || !isCore(id.Pos()) {
			continue
		}
		resolved++
		if isCore(obj.Pos()) {
			continue
		}
		t.Errorf("%s: uses %s, declared in %s", fset.Position(id.Pos()), id.Name, fset.File(obj.Pos()).Name())
	}
	if resolved < 1000 {
		t.Fatalf("only %d names of the core resolved: the check reads too little to mean anything", resolved)
	}
	// The role code (the local runner, the follower, durability) hangs off its role's type, so Session's
	// methods are the core's.
	for _, f := range files {
		for _, d := range f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if ok && fd.Recv != nil && isSessionPointer(fd.Recv.List[0].Type) && !isCore(fd.Pos()) {
				t.Errorf("%s: method %s of *Session outside the core", fset.Position(fd.Pos()), fd.Name.Name)
			}
		}
	}
	for _, name := range coreFiles {
		if _, err := os.Stat(name); err != nil {
			t.Errorf("core file %s: %v", name, err)
		}
	}
}

// TestRolesUseNoCoreField fails on a file outside the core that names an unexported field of a type the core
// declares: the roles change the core's state through its methods, so that the core can move to a package of
// its own. The options makeSession takes (makeOptions) are the fields others set.
func TestRolesUseNoCoreField(t *testing.T) {
	fset, _, info, pkg := typeCheckPackage(t)
	isCore := func(pos token.Pos) bool { return slices.Contains(coreFiles, fset.File(pos).Name()) }
	checked := 0
	for id, obj := range info.Uses {
		v, ok := obj.(*types.Var)
		if !ok || !v.IsField() || obj.Pkg() != pkg || !isCore(obj.Pos()) {
			continue
		}
		checked++
		if v.Exported() || isCore(id.Pos()) || isField(info, obj, "makeOptions") {
			continue
		}
		t.Errorf("%s: uses the core's field %s: ask the core with a method", fset.Position(id.Pos()), id.Name)
	}
	if checked < 500 {
		t.Fatalf("only %d uses of the core's fields resolved: the check reads too little to mean anything", checked)
	}
}

// typeCheckPackage parses the package's non-test files and type-checks them with every import left empty:
// names of this package resolve without them, and that is all these checks read.
func typeCheckPackage(t *testing.T) (*token.FileSet, []*ast.File, *types.Info, *types.Package) {
	t.Helper()
	fset := token.NewFileSet()
	names, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	var files []*ast.File
	for _, name := range names {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	// The errors about the imported names are expected.
	conf := types.Config{Importer: emptyImporter{}, Error: func(error) {}}
	info := &types.Info{Uses: map[*ast.Ident]types.Object{}, Defs: map[*ast.Ident]types.Object{}}
	pkg, _ := conf.Check("sessions", fset, files, info)
	return fset, files, info, pkg
}

func isSessionPointer(e ast.Expr) bool {
	star, ok := e.(*ast.StarExpr)
	if !ok {
		return false
	}
	id, ok := star.X.(*ast.Ident)
	return ok && id.Name == "Session"
}

// emptyImporter imports every package as an empty one of the path's last name.
type emptyImporter struct{}

func (emptyImporter) Import(p string) (*types.Package, error) {
	name := path.Base(p)
	if p == "github.com/coder/acp-go-sdk" {
		name = "acp"
	}
	pkg := types.NewPackage(p, name)
	pkg.MarkComplete()
	return pkg, nil
}

// isField reports whether field is a field of the struct type named typeName.
func isField(info *types.Info, field types.Object, typeName string) bool {
	for _, obj := range info.Defs {
		tn, ok := obj.(*types.TypeName)
		if !ok || tn.Name() != typeName {
			continue
		}
		st, ok := tn.Type().Underlying().(*types.Struct)
		if !ok {
			return false
		}
		for f := range st.Fields() {
			if f == field {
				return true
			}
		}
	}
	return false
}
