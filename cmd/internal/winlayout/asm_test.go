package winlayout

import (
	"bytes"
	"testing"
)

// TestParseAsmData reads figures the way x86_64-w64-mingw32-gcc -S writes
// them (integers of each width, .ascii with short octal escapes, .zero),
// without needing the compiler.
func TestParseAsmData(t *testing.T) {
	asm := "\t.globl\tfig_0\n\t.section .rdata,\"dr\"\n\t.align 16\nfig_0:\n\t.quad\t24\n\t.quad\t8\n" +
		"GUID_X:\n\t.long\t1408590599\n\t.word\t-18753\n\t.word\t4560\n\t.ascii \"\\224\\362\\0\\240\\311\\36\\373\\213\"\n" +
		"\t.text\nfig_1:\n\t.byte\t1\n\t.zero\t3\n"
	syms, err := parseAsmData([]byte(asm))
	if err != nil {
		t.Fatal(err)
	}
	if got := syms["fig_0"]; !bytes.Equal(got, []byte{24, 0, 0, 0, 0, 0, 0, 0, 8, 0, 0, 0, 0, 0, 0, 0}) {
		t.Errorf("fig_0 = %v", got)
	}
	want := []byte{0x07, 0x63, 0xf5, 0x53, 0xbf, 0xb6, 0xd0, 0x11, 0x94, 0xf2, 0x00, 0xa0, 0xc9, 0x1e, 0xfb, 0x8b}
	if got := syms["GUID_X"]; !bytes.Equal(got, want) {
		t.Errorf("GUID_X = % x, want % x", got, want)
	}
	if got := syms["fig_1"]; !bytes.Equal(got, []byte{1, 0, 0, 0}) {
		t.Errorf("fig_1 = %v", got)
	}
}

// TestCProgram checks the generated C for a plain figure and a
// prototype, which the compiler then checks against the SDK.
func TestCProgram(t *testing.T) {
	main, guids := cProgram([]figure{
		{"const x.a", "IOCTL_X", mingw},
		{"params x.f", "params DWORD F(HANDLE, ULONG)", mingw},
		{"guid x.g", "guid virtdisk.h G", mingw},
	})
	for _, want := range []string{
		"const unsigned long long fig_0[] = {(unsigned long long)(IOCTL_X)};",
		"_Static_assert(__builtin_types_compatible_p(__typeof__(F), DWORD WINAPI (HANDLE, ULONG)), \"prototype of F\");",
		"const unsigned long long fig_1[] = {2, sizeof(HANDLE), sizeof(ULONG)};",
	} {
		if !bytes.Contains([]byte(main), []byte(want)) {
			t.Errorf("C program lacks %q:\n%s", want, main)
		}
	}
	if !bytes.Contains([]byte(guids), []byte("#include <initguid.h>\n#include <windows.h>\n#include <virtdisk.h>\n")) {
		t.Errorf("GUID unit:\n%s", guids)
	}
}
