package convgen

// Directives: what the hand-written files of an output package declare,
// its functions and methods, which the generator steps aside for, and its
// //convgen: comments.

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
)

// handWritten is what the non-generated files of an output package (an
// adapter or a client stub) define.
type handWritten struct {
	funcs    map[string]bool   // top-level functions
	fallible map[string]bool   // top-level functions returning (T, error)
	methods  map[string]bool   // methods on Server
	renames  map[string]string // //convgen:rename RPC=Method
	ignore   map[string]string // //convgen:ignore, lower-cased field -> as written
	skip     map[string]bool   // //convgen:skip RPC (client stubs only)
	fields   []*fieldDirective // //convgen:field, diskid, mapkeys and refuse
	like     string            // //convgen:like <version>
	files    int               // hand-written files read
	errs     []string          // malformed directives

	// calls holds, for each method on recv, the group Interface methods
	// its body calls (s.group.M): what a hand-written handler serves its
	// RPC with, for the method facts (methods.go).
	calls map[string][]string
}

// fieldDirective is one entry of a //convgen:field, diskid, mapkeys or
// refuse directive: how one field of a message converts when the name rule
// and the type rules cannot tell.
type fieldDirective struct {
	verb   string      // field, diskid, mapkeys or refuse
	msg    string      // the message it is limited to ("" for every one): the wire message's name, or for refuse the model's
	field  string      // the wire field; for refuse, the model field
	model  string      // field and diskid: the model field ("" for the wire field's name)
	keys   [][2]string // mapkeys: map key and model field
	reason string      // refuse: why the version cannot carry the field
	text   string      // the entry as written, for messages
	used   bool        // it matched a field of a converted message
}

// matches tells whether d applies to field of message msg.
func (d *fieldDirective) matches(msg, field string) bool {
	return (d.msg == "" || d.msg == msg) && strings.EqualFold(d.field, field)
}

// fieldDirective returns the directive among verbs that applies to field
// of message msg, preferring one limited to msg over one for every message.
func (hw *handWritten) fieldDirective(msg, field string, verbs ...string) *fieldDirective {
	var found *fieldDirective
	for _, d := range hw.fields {
		if !d.matches(msg, field) || !slices.Contains(verbs, d.verb) {
			continue
		}
		if d.msg != "" {
			return d
		}
		if found == nil {
			found = d
		}
	}
	return found
}

// directivePrefix starts every convgen directive comment.
const directivePrefix = "//convgen:"

// scanHandWritten reads the hand-written files of an output package: its
// functions, the methods on recv (Server for adapters, Client for client
// stubs) and the directives.
func scanHandWritten(dir, recv string) (handWritten, error) {
	hw := handWritten{
		funcs: map[string]bool{}, fallible: map[string]bool{}, methods: map[string]bool{}, calls: map[string][]string{},
		renames: map[string]string{}, ignore: map[string]string{}, skip: map[string]bool{},
	}
	entries, err := os.ReadDir(dir)
	if os.IsNotExist(err) {
		return hw, nil
	}
	if err != nil {
		return hw, err
	}
	fset := token.NewFileSet()
	for _, e := range entries {
		n := e.Name()
		if e.IsDir() || !strings.HasSuffix(n, ".go") || strings.HasSuffix(n, "_test.go") || strings.HasPrefix(n, "zz_generated") {
			continue
		}
		hw.files++
		f, err := parser.ParseFile(fset, filepath.Join(dir, n), nil, parser.SkipObjectResolution|parser.ParseComments)
		if err != nil {
			return hw, err
		}
		for _, cg := range f.Comments {
			for _, c := range cg.List {
				if strings.HasPrefix(c.Text, directivePrefix) {
					hw.directive(fset.Position(c.Pos()).String(), strings.TrimPrefix(c.Text, directivePrefix))
				}
			}
		}
		for _, d := range f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok {
				continue
			}
			if fd.Recv == nil {
				hw.funcs[fd.Name.Name] = true
				if r := fd.Type.Results; r != nil && r.NumFields() == 2 {
					hw.fallible[fd.Name.Name] = true
				}
				continue
			}
			t := fd.Recv.List[0].Type
			if st, ok := t.(*ast.StarExpr); ok {
				t = st.X
			}
			if id, ok := t.(*ast.Ident); ok && id.Name == recv {
				hw.methods[fd.Name.Name] = true
				hw.calls[fd.Name.Name] = groupCalls(fd)
			}
		}
	}
	return hw, nil
}

var identRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// directive records one //convgen: comment found at pos.
func (hw *handWritten) directive(pos, text string) {
	verb, args, _ := strings.Cut(text, " ")
	fields := strings.Fields(args)
	bad := func(format string, a ...any) {
		hw.errs = append(hw.errs, pos+": "+directivePrefix+verb+": "+fmt.Sprintf(format, a...))
	}
	switch verb {
	case "rename":
		if len(fields) == 0 {
			bad("want //convgen:rename <RPC>=<Method>")
		}
		for _, f := range fields {
			rpc, method, ok := strings.Cut(f, "=")
			if !ok || !identRE.MatchString(rpc) || !identRE.MatchString(method) {
				bad("%q is not <RPC>=<Method>", f)
				continue
			}
			if _, dup := hw.renames[rpc]; dup {
				bad("%s is renamed twice", rpc)
				continue
			}
			hw.renames[rpc] = method
		}
	case "ignore":
		if len(fields) == 0 {
			bad("want //convgen:ignore <Field> ...")
		}
		for _, f := range fields {
			if !identRE.MatchString(f) {
				bad("%q is not a field name", f)
				continue
			}
			hw.ignore[strings.ToLower(f)] = f
		}
	case "skip":
		if len(fields) == 0 {
			bad("want //convgen:skip <RPC> ...")
		}
		for _, f := range fields {
			if !identRE.MatchString(f) {
				bad("%q is not an RPC name", f)
				continue
			}
			hw.skip[f] = true
		}
	case "field", "diskid":
		want := "[<Message>.]<WireField>=<ModelField>"
		if verb == "diskid" {
			want = "[<Message>.]<WireField>[=<ModelField>]"
		}
		if len(fields) == 0 {
			bad("want //convgen:%s %s ...", verb, want)
		}
		for _, f := range fields {
			ref, model, renamed := strings.Cut(f, "=")
			msg, field, ok := fieldRef(ref)
			if !ok || (renamed && !identRE.MatchString(model)) || (verb == "field" && !renamed) {
				bad("%q is not %s", f, want)
				continue
			}
			hw.fields = append(hw.fields, &fieldDirective{verb: verb, msg: msg, field: field, model: model, text: f})
		}
	case "mapkeys":
		msg, field, ok := fieldRef(firstOf(fields))
		if !ok || len(fields) < 2 {
			bad("want //convgen:mapkeys [<Message>.]<WireField> <key>=<ModelField> ...")
			return
		}
		d := &fieldDirective{verb: verb, msg: msg, field: field, text: fields[0]}
		for _, f := range fields[1:] {
			key, model, ok := strings.Cut(f, "=")
			if !ok || key == "" || !identRE.MatchString(model) {
				bad("%q is not <key>=<ModelField>", f)
				continue
			}
			d.keys = append(d.keys, [2]string{key, model})
		}
		hw.fields = append(hw.fields, d)
	case "refuse":
		msg, field, ok := fieldRef(firstOf(fields))
		if !ok || len(fields) < 2 {
			bad("want //convgen:refuse [<Message>.]<ModelField> <why the version cannot carry it>")
			return
		}
		reason := strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(args), fields[0]))
		hw.fields = append(hw.fields, &fieldDirective{verb: verb, msg: msg, field: field, reason: reason, text: fields[0]})
	case "like":
		if len(fields) != 1 || !versionRE.MatchString(fields[0]) {
			bad("want //convgen:like <version>")
			return
		}
		if hw.like != "" {
			bad("one //convgen:like per package")
			return
		}
		hw.like = fields[0]
	default:
		bad("unknown directive (want rename, ignore, skip, field, diskid, mapkeys, refuse or like)")
	}
}

// fieldRef splits [<Message>.]<Field>.
func fieldRef(s string) (msg, field string, ok bool) {
	msg, field, dotted := strings.Cut(s, ".")
	if !dotted {
		msg, field = "", s
	}
	return msg, field, identRE.MatchString(field) && (!dotted || identRE.MatchString(msg))
}

func firstOf(fields []string) string {
	if len(fields) == 0 {
		return ""
	}
	return fields[0]
}

// loadHandWritten scans the hand-written files of the output package of gv
// in outDir and, when they say //convgen:like <version>, adds the
// directives of that version's package of the same kind (adapter or
// client stub), so that a version that is another under a new package
// states its differences once. Functions are not shared: Go cannot, and a
// version needing its own writes them.
func loadHandWritten(cfg Config, gv *groupVersion, outDir, recv string) (handWritten, error) {
	hw, err := scanHandWritten(filepath.Join(cfg.Dir, outDir), recv)
	if err != nil || hw.like == "" {
		return hw, err
	}
	likeDir := filepath.Join(filepath.Dir(outDir), gv.group+hw.like)
	where := filepath.ToSlash(outDir) + ": //convgen:like " + hw.like
	other, err := scanHandWritten(filepath.Join(cfg.Dir, likeDir), recv)
	switch {
	case err != nil:
		return hw, err
	case other.files == 0:
		hw.errs = append(hw.errs, fmt.Sprintf("%s: no hand-written files in %s", where, filepath.ToSlash(likeDir)))
		return hw, nil
	case other.like != "":
		hw.errs = append(hw.errs, fmt.Sprintf("%s: that package is //convgen:like %s itself; name %s", where, other.like, other.like))
		return hw, nil
	}
	hw.errs = append(hw.errs, other.errs...)
	for rpc, method := range other.renames {
		if _, dup := hw.renames[rpc]; dup {
			hw.errs = append(hw.errs, fmt.Sprintf("%s: %s is renamed in both packages", where, rpc))
			continue
		}
		hw.renames[rpc] = method
	}
	maps.Copy(hw.ignore, other.ignore)
	maps.Copy(hw.skip, other.skip)
	// Copies: whether an entry matched is the package's own affair.
	for _, d := range other.fields {
		c := *d
		hw.fields = append(hw.fields, &c)
	}
	return hw, nil
}
