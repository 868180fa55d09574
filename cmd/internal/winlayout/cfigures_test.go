package winlayout

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
)

// mingwCC is the C compiler for the SDK declarations (Debian package
// gcc-mingw-w64-x86-64).
const mingwCC = "x86_64-w64-mingw32-gcc"

// cHeaders are the headers every C figure may use: mingw-w64's SDK
// headers where they are right, and msdocs.h, this package's
// transcriptions of Microsoft's documentation where they are not.
var cHeaders = []string{"windows.h", "winioctl.h", "ntddscsi.h", "virtdisk.h", "winternl.h", "wbemcli.h", "winerror.h", "diskguid.h", "stddef.h", "msdocs.h"}

// cProgram is the generated C: one constant array per figure, so that the
// assembly output holds every value and nothing has to run. A "params"
// figure also asserts at compile time that the SDK declares the function
// with exactly the parameter types the entry lists.
func cProgram(figs []figure) (main, guids string) {
	var m, g strings.Builder
	for _, h := range cHeaders {
		fmt.Fprintf(&m, "#include <%s>\n", h)
	}
	// A GUID is defined (not only declared) when initguid.h comes first;
	// that unit is compiled on its own. windows.h includes winioctl.h
	// already, and a second inclusion would define its GUIDs twice.
	g.WriteString("#include <initguid.h>\n#include <windows.h>\n")
	guidHeaders := map[string]bool{"winioctl.h": true}
	for i, f := range figs {
		switch kind, rest := cKind(f.C); kind {
		case "guid":
			header, _, _ := strings.Cut(rest, " ")
			if !guidHeaders[header] {
				guidHeaders[header] = true
				fmt.Fprintf(&g, "#include <%s>\n", header)
			}
		case "params":
			ret, fn, types := splitPrototype(rest)
			fmt.Fprintf(&m, "_Static_assert(__builtin_types_compatible_p(__typeof__(%s), %s WINAPI (%s)), %q);\n",
				fn, ret, strings.Join(types, ", "), "prototype of "+fn)
			vals := []string{strconv.Itoa(len(types))}
			for _, t := range types {
				vals = append(vals, "sizeof("+t+")")
			}
			fmt.Fprintf(&m, "const unsigned long long fig_%d[] = {%s};\n", i, strings.Join(vals, ", "))
		default:
			fmt.Fprintf(&m, "const unsigned long long fig_%d[] = {(unsigned long long)(%s)};\n", i, f.C)
		}
	}
	// Under Wine the same figures are printed by running the program
	// (wineMain), a cross-check of the values read from the assembly.
	m.WriteString("#ifdef ORACLE_MAIN\n#include <stdio.h>\nint main(void) {\n")
	for i, f := range figs {
		if kind, rest := cKind(f.C); kind == "guid" {
			_, sym, _ := strings.Cut(rest, " ")
			fmt.Fprintf(&m, "\t{ const unsigned char *b = (const unsigned char *)&%s; printf(\"%d guid\"); for (int j = 0; j < 16; j++) printf(\" %%u\", b[j]); printf(\"\\n\"); }\n", sym, i)
			continue
		}
		fmt.Fprintf(&m, "\tprintf(\"%d\"); for (unsigned j = 0; j < sizeof fig_%d / 8; j++) printf(\" %%llu\", fig_%d[j]); printf(\"\\n\");\n", i, i, i)
	}
	m.WriteString("\treturn 0;\n}\n#endif\n")
	return m.String(), g.String()
}

// cKind splits "guid ..." and "params ..." from a plain expression.
func cKind(c string) (kind, rest string) {
	for _, k := range []string{"guid", "params"} {
		if r, ok := strings.CutPrefix(c, k+" "); ok {
			return k, r
		}
	}
	return "expr", c
}

// splitPrototype reads "RET NAME(T1, T2)".
func splitPrototype(p string) (ret, fn string, types []string) {
	head, args, _ := strings.Cut(p, "(")
	args = strings.TrimSuffix(strings.TrimSpace(args), ")")
	head = strings.TrimSpace(head)
	i := strings.LastIndex(head, " ")
	ret, fn = head[:i], head[i+1:]
	if strings.TrimSpace(args) != "void" {
		for _, a := range strings.Split(args, ",") {
			types = append(types, strings.TrimSpace(a))
		}
	}
	return ret, fn, types
}

// compileFigures compiles the program and returns the C value of each
// figure, formatted as the Go side formats its own.
func compileFigures(dir string, figs []figure) ([]string, error) {
	mainC, guidsC := cProgram(figs)
	mainSyms, err := compileToData(dir, "figures.c", mainC)
	if err != nil {
		return nil, err
	}
	guidSyms, err := compileToData(dir, "guids.c", guidsC)
	if err != nil {
		return nil, err
	}
	out := make([]string, len(figs))
	for i, f := range figs {
		switch kind, rest := cKind(f.C); kind {
		case "guid":
			_, sym, _ := strings.Cut(rest, " ")
			b := guidSyms[sym]
			if len(b) != 16 {
				return nil, fmt.Errorf("%s: %s is not a 16-byte GUID in the assembly (%d bytes)", f.Go, sym, len(b))
			}
			out[i] = formatGUID(b)
		default:
			b := mainSyms[fmt.Sprintf("fig_%d", i)]
			if len(b) == 0 || len(b)%8 != 0 {
				return nil, fmt.Errorf("%s: fig_%d has %d bytes in the assembly", f.Go, i, len(b))
			}
			var vals []string
			for j := 0; j < len(b); j += 8 {
				vals = append(vals, strconv.FormatUint(binary.LittleEndian.Uint64(b[j:]), 10))
			}
			if kind == "params" {
				out[i] = vals[0] + ":" + strings.Join(vals[1:], ",")
			} else {
				out[i] = vals[0]
			}
		}
	}
	return out, nil
}

// formatGUID formats a GUID's 16 bytes as the Go side does.
func formatGUID(b []byte) string {
	return fmt.Sprintf("%08x-%04x-%04x-%x-%x", binary.LittleEndian.Uint32(b), binary.LittleEndian.Uint16(b[4:]),
		binary.LittleEndian.Uint16(b[6:]), b[8:10], b[10:16])
}

// compileToData compiles src with -S and returns the bytes of every data
// symbol in the assembly.
func compileToData(dir, name, src string) (map[string][]byte, error) {
	cfile := filepath.Join(dir, name)
	if err := os.WriteFile(cfile, []byte(src), 0o644); err != nil {
		return nil, err
	}
	testdata, err := filepath.Abs("testdata")
	if err != nil {
		return nil, err
	}
	asm := strings.TrimSuffix(cfile, ".c") + ".s"
	cmd := exec.Command(mingwCC, "-std=gnu11", "-O0", "-S", "-I", testdata, "-o", asm, cfile)
	if out, err := cmd.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("%s %s: %v\n%s", mingwCC, name, err, out)
	}
	text, err := os.ReadFile(asm)
	if err != nil {
		return nil, err
	}
	return parseAsmData(text)
}

// parseAsmData collects the bytes GNU as directives emit after each label
// (.quad, .long, .word/.value/.short, .byte, .ascii, .zero/.space) until
// the next label or section.
func parseAsmData(text []byte) (map[string][]byte, error) {
	syms := map[string][]byte{}
	cur := ""
	sc := bufio.NewScanner(bytes.NewReader(text))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if strings.HasSuffix(line, ":") && !strings.ContainsAny(line, " \t") {
			cur = strings.TrimSuffix(line, ":")
			syms[cur] = nil
			continue
		}
		dir, arg, _ := strings.Cut(line, "\t")
		if arg == "" {
			dir, arg, _ = strings.Cut(line, " ")
		}
		arg = strings.TrimSpace(arg)
		width := map[string]int{".quad": 8, ".long": 4, ".word": 2, ".value": 2, ".short": 2, ".byte": 1}[dir]
		switch {
		case cur == "":
		case dir == ".section" || dir == ".text" || dir == ".data":
			cur = ""
		case width > 0:
			for _, a := range strings.Split(arg, ",") {
				v, err := strconv.ParseInt(strings.TrimSpace(a), 0, 64)
				if err != nil {
					return nil, fmt.Errorf("assembly %q: %w", line, err)
				}
				b := make([]byte, 8)
				binary.LittleEndian.PutUint64(b, uint64(v))
				syms[cur] = append(syms[cur], b[:width]...)
			}
		case dir == ".zero" || dir == ".space":
			n, err := strconv.Atoi(arg)
			if err != nil {
				return nil, fmt.Errorf("assembly %q: %w", line, err)
			}
			syms[cur] = append(syms[cur], make([]byte, n)...)
		case dir == ".ascii" || dir == ".string" || dir == ".asciz":
			s, err := unquoteGas(arg)
			if err != nil {
				return nil, fmt.Errorf("assembly %q: %w", line, err)
			}
			if dir != ".ascii" {
				s = append(s, 0)
			}
			syms[cur] = append(syms[cur], s...)
		}
	}
	return syms, sc.Err()
}

// unquoteGas decodes a GNU as string literal: C escapes with octal of one
// to three digits.
func unquoteGas(q string) ([]byte, error) {
	if len(q) < 2 || q[0] != '"' || q[len(q)-1] != '"' {
		return nil, fmt.Errorf("not a string: %s", q)
	}
	q = q[1 : len(q)-1]
	var out []byte
	for i := 0; i < len(q); i++ {
		c := q[i]
		if c != '\\' {
			out = append(out, c)
			continue
		}
		i++
		if i >= len(q) {
			return nil, fmt.Errorf("trailing backslash")
		}
		switch e := q[i]; {
		case e >= '0' && e <= '7':
			v, n := 0, 0
			for n < 3 && i < len(q) && q[i] >= '0' && q[i] <= '7' {
				v = v*8 + int(q[i]-'0')
				i++
				n++
			}
			i--
			out = append(out, byte(v))
		default:
			out = append(out, map[byte]byte{'n': '\n', 't': '\t', 'r': '\r', 'b': '\b', 'f': '\f', '"': '"', '\\': '\\'}[e])
		}
	}
	return out, nil
}
