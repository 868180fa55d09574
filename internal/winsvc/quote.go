package winsvc

import (
	"path"
	"strings"
)

// EscapeArg quotes one argument for a Windows command line so that the
// program receives it unchanged, by the rules the Microsoft C runtime,
// CommandLineToArgvW and Go's os.Args all use: an argument with a space,
// a tab or nothing at all is put in double quotes; a double quote is
// preceded by a backslash; backslashes are doubled only where they come
// before a double quote (an escaped one, or the closing one). It gives the
// same result as syscall.EscapeArg, which exists on Windows only; a
// Windows test checks that.
func EscapeArg(s string) string {
	if s == "" {
		return `""`
	}
	quote := strings.ContainsAny(s, " \t")
	if !quote && !strings.ContainsAny(s, `"\`) {
		return s
	}
	var b strings.Builder
	if quote {
		b.WriteByte('"')
	}
	slashes := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch c {
		case '\\':
			slashes++
		case '"':
			// The backslashes before a quote are doubled, and the quote
			// escaped with one more.
			b.WriteString(strings.Repeat(`\`, slashes+1))
			slashes = 0
		default:
			slashes = 0
		}
		b.WriteByte(c)
	}
	if quote {
		// Backslashes before the closing quote are doubled too.
		b.WriteString(strings.Repeat(`\`, slashes))
		b.WriteByte('"')
	}
	return b.String()
}

// CommandLine builds a service's command line (its BinaryPathName) from
// the program's absolute path and its arguments. The program is always in
// double quotes: an unquoted path with a space would make the SCM try
// "C:\Program.exe" first (the "unquoted service path" weakness). Each
// argument is quoted by EscapeArg.
//
// The SCM expands %VARIABLE% references in the whole command line when it
// starts the service (ImagePath is a REG_EXPAND_SZ value); there is no way
// to escape a literal %.
func CommandLine(program string, args []string) string {
	var b strings.Builder
	b.WriteByte('"')
	b.WriteString(program)
	b.WriteByte('"')
	for _, a := range args {
		b.WriteByte(' ')
		b.WriteString(EscapeArg(a))
	}
	return b.String()
}

// SplitCommandLine splits a Windows command line into its program and
// arguments, by the rules Go's os.Args uses on Windows (which are
// CommandLineToArgvW's for everything after the program). It reverses
// CommandLine and EscapeArg.
func SplitCommandLine(cmd string) []string {
	var args []string
	for {
		cmd = strings.TrimLeft(cmd, " \t")
		if cmd == "" {
			return args
		}
		var arg string
		arg, cmd = nextArg(cmd)
		args = append(args, arg)
	}
}

// nextArg reads one argument from the start of cmd.
func nextArg(cmd string) (arg, rest string) {
	var b strings.Builder
	inQuote := false
	slashes := 0
	for ; cmd != ""; cmd = cmd[1:] {
		c := cmd[0]
		switch c {
		case ' ', '\t':
			if !inQuote {
				b.WriteString(strings.Repeat(`\`, slashes))
				return b.String(), cmd[1:]
			}
		case '"':
			b.WriteString(strings.Repeat(`\`, slashes/2))
			if slashes%2 == 0 {
				// "" inside quotes is a literal quote (the rule before
				// 2008 that Go follows).
				if inQuote && len(cmd) > 1 && cmd[1] == '"' {
					b.WriteByte('"')
					cmd = cmd[1:]
				}
				inQuote = !inQuote
			} else {
				b.WriteByte('"')
			}
			slashes = 0
			continue
		case '\\':
			slashes++
			continue
		}
		b.WriteString(strings.Repeat(`\`, slashes))
		slashes = 0
		b.WriteByte(c)
	}
	b.WriteString(strings.Repeat(`\`, slashes))
	return b.String(), ""
}

// ProgramName returns the file name of the program a service command line
// runs, in lower case: "csi-proxy.exe" for
// `"C:\k\csi-proxy.exe" -windows-service`. An unquoted program path that
// contains spaces is read up to its ".exe", as the SCM would find it.
func ProgramName(binPath string) string {
	binPath = strings.TrimLeft(binPath, " \t")
	var prog string
	if strings.HasPrefix(binPath, `"`) {
		prog, _, _ = strings.Cut(binPath[1:], `"`)
	} else {
		prog, _, _ = strings.Cut(binPath, " ")
		lower := strings.ToLower(binPath)
		for i := 0; ; i++ {
			j := strings.Index(lower[i:], ".exe")
			if j < 0 {
				break
			}
			end := i + j + len(".exe")
			if end == len(binPath) || binPath[end] == ' ' || binPath[end] == '\t' {
				prog = binPath[:end]
				break
			}
			i += j
		}
	}
	return strings.ToLower(path.Base(strings.ReplaceAll(prog, `\`, "/")))
}

// IsAbsWindowsPath reports whether p is an absolute Windows path: a drive
// letter followed by a backslash or slash (C:\dir), or a UNC path
// (\\server\share\...). It answers the same on every OS.
func IsAbsWindowsPath(p string) bool {
	if strings.HasPrefix(p, `\\`) {
		return len(p) > 2
	}
	if len(p) < 3 || p[1] != ':' || (p[2] != '\\' && p[2] != '/') {
		return false
	}
	c := p[0] | 0x20 // lower case
	return c >= 'a' && c <= 'z'
}
