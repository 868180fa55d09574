// Package winlayout is the layout oracle of the Windows code: its test
// compares every Win32 figure the code defines by hand (struct sizes and
// field offsets of Go mirrors, literal offsets and buffer sizes in the
// parsers, IOCTL/FSCTL codes, flags, error codes, GUIDs and the parameter
// lists of the functions the code declares itself) with what a C compiler
// says for the SDK's declarations.
//
// The Go figures are computed by go/types for GOOS=windows GOARCH=amd64
// (the gc compiler's own sizes), so nothing Go has to run. The C figures
// come from x86_64-w64-mingw32-gcc's assembly output of a generated
// program (each figure a constant array), so nothing C has to run either;
// where mingw-w64's headers are wrong or missing, testdata/msdocs.h holds
// transcriptions of Microsoft's documentation, each cited. make
// layout-oracle runs it; without CSI_NODE_PROXY_LAYOUT_ORACLE=1 the test
// skips (it needs the cross compiler).
package winlayout
