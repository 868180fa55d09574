package main

import (
	"flag"
	"regexp"
	"strings"
)

// The flag package words its errors with one dash ("flag provided but not
// defined: -outptu"), while this CLI's help and docs spell long flags with
// two; an operator who copies the name from the error into the command
// line should get the spelling help uses. flagDashes rewrites the flag
// package's messages to that spelling: --name for long flags, -o for the
// one-letter aliases.

// flagNameInError finds the flag the flag package names in its messages:
// "defined: -x", "for flag -x:", "argument: -x".
var flagNameInError = regexp.MustCompile(`(defined: |for flag |argument: )-{1,2}([^\s:=]+)`)

// dashed spells a flag name as help does.
func dashed(name string) string {
	if len(name) == 1 {
		return "-" + name
	}
	return "--" + name
}

// flagDashes rewrites a flag-parsing error message: the undefined flag
// becomes "unknown flag --name", other messages get the name as help
// spells it.
func flagDashes(msg string) string {
	if name, ok := strings.CutPrefix(msg, "flag provided but not defined: "); ok {
		return "unknown flag " + dashed(strings.TrimLeft(name, "-"))
	}
	return flagNameInError.ReplaceAllStringFunc(msg, func(m string) string {
		sub := flagNameInError.FindStringSubmatch(m)
		return sub[1] + dashed(sub[2])
	})
}

// flagSuggestion is the "did you mean" of an unknown flag among fs's. A
// one-letter flag has no suggestion: every one-letter name is one edit
// from every other, so "-q" would be answered with "-o", which is no
// closer to what was meant than any other flag.
func flagSuggestion(err error, fs *flag.FlagSet) string {
	name, ok := undefinedFlag(err)
	if !ok || len(name) < 2 {
		return ""
	}
	var names []string
	fs.VisitAll(func(f *flag.Flag) {
		if len(f.Name) > 1 {
			names = append(names, f.Name)
		}
	})
	s := suggest(name, names)
	if len(s) == 0 {
		return ""
	}
	for i := range s {
		s[i] = dashed(s[i])
	}
	return "; did you mean " + strings.Join(s, " or ") + "?"
}
