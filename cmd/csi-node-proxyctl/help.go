package main

import (
	"flag"
	"io"
	"reflect"
	"slices"
	"strings"
	"text/tabwriter"
)

// writeRootHelp writes the top-level help: what the CLI is, the groups and
// their commands, the global flags and the exit codes.
func writeRootHelp(w io.Writer, root *flag.FlagSet) {
	say(w, `Usage: %[1]s [global flags] <group> <command> [flags] [arguments]
       %[1]s [global flags] version|health [flags]
       %[1]s help [<group> [<command>]]

%[1]s reads and changes a node through csi-node-proxy: its disks,
volumes, paths, SMB mappings, iSCSI sessions and services. It talks to the
daemon's endpoints (Unix sockets in --socket-dir, named pipes on Windows), or
with --local makes the same calls in this process through library mode.
Output is a table, or with -o json one JSON document with stable snake_case
field names. Commands that change the node ask for confirmation on a
terminal; elsewhere they need --yes.

Commands:
`, progName)
	tw := newTabWriter(w)
	for _, cmd := range commands {
		if cmd.group == "" {
			say(tw, "  %s\t%s\n", cmd.name, cmd.summary)
		}
	}
	for _, gi := range commandGroups {
		say(tw, "  %s\t%s\n", gi.name, gi.summary)
		for _, cmd := range commands {
			if cmd.group == gi.name {
				say(tw, "    %s\t%s\n", cmd.name+argsUsage(&cmd), cmd.summary)
			}
		}
	}
	_ = tw.Flush() // tabwriter errors are the underlying writer's; help has nothing to do about them
	say(w, "\nGlobal flags (before or after the command):\n")
	writeFlagsWhere(w, root, nil, func(f *flag.Flag) bool { return !localOnly(f) })
	say(w, "\nFlags for --local (library mode: the daemon's settings, for this process):\n")
	writeFlagsWhere(w, root, nil, localOnly)
	say(w, "\nExit codes:\n")
	writeExitCodes(w, []int{exitOK, exitFailure, exitUsage, exitNotFound, exitPermission, exitUnavailable, exitInvalid, exitDeclined})
	say(w, "\n%s <group> <command> --help describes a command, its arguments, JSON output\nand exit codes.\n", progName)
}

// writeGroupHelp lists a group's commands.
func writeGroupHelp(w io.Writer, group string) {
	var summary string
	for _, gi := range commandGroups {
		if gi.name == group {
			summary = gi.summary
		}
	}
	say(w, "Usage: %s [global flags] %s <command> [flags] [arguments]\n\n%s: %s.\n\nCommands:\n", progName, group, group, summary)
	tw := newTabWriter(w)
	for _, cmd := range commands {
		if cmd.group == group {
			mark := ""
			if cmd.mutating {
				mark = " (changes the node)"
			}
			say(tw, "  %s\t%s%s\n", cmd.name+argsUsage(&cmd), cmd.summary, mark)
		}
	}
	_ = tw.Flush() // see writeRootHelp
	say(w, "\n%s %s <command> --help describes a command; %s --help lists the global\nflags and exit codes.\n", progName, group, progName)
}

// argsUsage renders the positional arguments for a usage line: " N PATH".
func argsUsage(cmd *command) string {
	var b strings.Builder
	for _, a := range cmd.args {
		if a.optional {
			b.WriteString(" [" + a.name + "]")
		} else {
			b.WriteString(" " + a.name)
		}
	}
	return b.String()
}

// writeCommandHelp writes a command's complete help: usage, description,
// arguments, flags with defaults, JSON output, example and exit codes. The
// help-completeness test holds every command to these sections.
func writeCommandHelp(w io.Writer, cmd *command, root *flag.FlagSet) {
	writeCommandHelpWith(w, cmd, root, true)
}

// writeCommandHelpWith is writeCommandHelp, with the global flags or (for
// docs/cli.md, which lists them once) a pointer to them.
func writeCommandHelpWith(w io.Writer, cmd *command, root *flag.FlagSet, globalFlags bool) {
	fs, _ := leafFlags(cmd, root)
	own := flag.NewFlagSet("", flag.ContinueOnError)
	fs.VisitAll(func(f *flag.Flag) {
		if root.Lookup(f.Name) == nil {
			own.Var(f.Value, f.Name, f.Usage)
			own.Lookup(f.Name).DefValue = f.DefValue
		}
	})
	say(w, "Usage: %s %s%s [flags]\n\n", progName, cmd.path(), argsUsage(cmd))
	say(w, "%s.\n\n%s\n", cmd.summary, strings.TrimSpace(cmd.about))
	if cmd.mutating {
		say(w, "\nThis command changes the node. On a terminal it says what it will do and asks\n[y/N]; when stdin is not a terminal it refuses (exit %d) unless --yes is given.\n", exitDeclined)
	}
	say(w, "\nArguments:\n")
	if len(cmd.args) == 0 {
		say(w, "  none\n")
	}
	tw := newTabWriter(w)
	for _, a := range cmd.args {
		help := a.help
		if a.optional {
			help += " (optional)"
		}
		say(tw, "  %s\t%s\n", a.name, help)
	}
	_ = tw.Flush() // see writeRootHelp
	say(w, "\nFlags:\n")
	if n := countFlags(own); n == 0 {
		say(w, "  none besides the global flags\n")
	} else {
		writeFlags(w, own, cmd.required)
	}
	say(w, "\nGlobal flags:\n")
	if globalFlags {
		writeFlagsWhere(w, root, nil, func(f *flag.Flag) bool { return commandUsesGlobal(cmd, f) })
		var rest []string
		root.VisitAll(func(f *flag.Flag) {
			if _, alias := flagAliases[f.Name]; !alias && !commandUsesGlobal(cmd, f) {
				rest = append(rest, "--"+f.Name)
			}
		})
		say(w, "  and %d more for --local or --version (%s): %s --help lists them\n", len(rest), strings.Join(rest[:min(3, len(rest))], ", ")+", ...", progName)
	} else {
		say(w, "  as for every command (see the top of this reference)\n")
	}
	say(w, "\nOutput (-o json):\n")
	writeJSONDoc(w, cmd.output)
	say(w, "\nExample:\n")
	for _, line := range strings.Split(strings.TrimSpace(cmd.example), "\n") {
		say(w, "  %s\n", strings.TrimSpace(line))
	}
	say(w, "\nExit codes:\n")
	writeExitCodes(w, cmd.exitCodes())
}

// localOnly tells a flag that only --local reads: its usage starts "With
// --local", the convention newGlobalFlags and smbflags.Add follow.
func localOnly(f *flag.Flag) bool { return strings.HasPrefix(f.Usage, "With --local") }

// commandUsesGlobal tells whether a command's help lists a global flag:
// where to reach the daemon, how to print, how long to wait, and --yes
// for a command that changes the node. The --local backend's settings and
// --version are listed once, in the top-level help.
func commandUsesGlobal(cmd *command, f *flag.Flag) bool {
	switch f.Name {
	case "version":
		return false
	case "yes":
		return cmd.mutating
	}
	return !localOnly(f)
}

// countFlags counts the flags defined on fs.
func countFlags(fs *flag.FlagSet) int {
	n := 0
	fs.VisitAll(func(*flag.Flag) { n++ })
	return n
}

// writeFlags lists fs's flags with their type and default; aliases are
// shown with the flag they stand for, required flags say so.
func writeFlags(w io.Writer, fs *flag.FlagSet, required []string) {
	writeFlagsWhere(w, fs, required, func(*flag.Flag) bool { return true })
}

// writeFlagsWhere is writeFlags for the flags keep accepts.
func writeFlagsWhere(w io.Writer, fs *flag.FlagSet, required []string, keep func(*flag.Flag) bool) {
	tw := newTabWriter(w)
	fs.VisitAll(func(f *flag.Flag) {
		if _, alias := flagAliases[f.Name]; alias || !keep(f) {
			return
		}
		names := "--" + f.Name
		for short, long := range flagAliases {
			if long == f.Name {
				names = "-" + short + ", " + names
			}
		}
		typ, usage := flag.UnquoteUsage(f)
		if typ != "" {
			names += " " + typ
		}
		switch {
		case slices.Contains(required, f.Name):
			usage += " (required)"
		case f.DefValue != "" && f.DefValue != "false" && f.DefValue != "0" && f.DefValue != "0s":
			usage += " (default " + f.DefValue + ")"
		}
		say(tw, "  %s\t%s\n", names, usage)
	})
	_ = tw.Flush() // see writeRootHelp
}

// writeExitCodes lists codes with their meaning.
func writeExitCodes(w io.Writer, codes []int) {
	for _, c := range codes {
		say(w, "  %d  %s\n", c, exitMeaning[c])
	}
}

// jsonField is one documented field of a command's JSON output.
type jsonField struct {
	path string // dotted, with [] for array elements: disks[].disk_number
	typ  string
	doc  string
}

// jsonFields walks a JSON output type and returns its documented fields in
// declaration order. The json tag names a field, the doc tag describes it.
func jsonFields(t reflect.Type, prefix string) []jsonField {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	var out []jsonField
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "" || name == "-" {
			continue
		}
		path := prefix + name
		ft := f.Type
		for ft.Kind() == reflect.Pointer {
			ft = ft.Elem()
		}
		switch {
		case ft.Kind() == reflect.Slice && elem(ft).Kind() == reflect.Struct:
			out = append(out, jsonField{path, "array of objects", f.Tag.Get("doc")})
			out = append(out, jsonFields(elem(ft), path+"[].")...)
		case ft.Kind() == reflect.Struct:
			out = append(out, jsonField{path, "object", f.Tag.Get("doc")})
			out = append(out, jsonFields(ft, path+".")...)
		default:
			out = append(out, jsonField{path, jsonType(ft), f.Tag.Get("doc")})
		}
	}
	return out
}

// elem returns a slice's element type without pointers.
func elem(t reflect.Type) reflect.Type {
	e := t.Elem()
	for e.Kind() == reflect.Pointer {
		e = e.Elem()
	}
	return e
}

// jsonType names a Go type as JSON sees it.
func jsonType(t reflect.Type) string {
	switch t.Kind() {
	case reflect.Bool:
		return "boolean"
	case reflect.String:
		return "string"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "integer"
	case reflect.Slice:
		return "array of " + jsonType(t.Elem()) + "s"
	}
	return t.Kind().String()
}

// writeJSONDoc describes the JSON output of a command from its type.
func writeJSONDoc(w io.Writer, output any) {
	say(w, "  one object; every field is always present, empty or null where it says so:\n")
	tw := newTabWriter(w)
	for _, f := range jsonFields(reflect.TypeOf(output), "") {
		say(tw, "  %s\t%s\t%s\n", f.path, f.typ, f.doc)
	}
	_ = tw.Flush() // see writeRootHelp
}

// newTabWriter aligns help columns and tables alike.
func newTabWriter(w io.Writer) *tabwriter.Writer {
	return tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)
}
