package iscsiinit

import (
	"bytes"
	"encoding/hex"
	"errors"
	"io"
	"reflect"
	"strings"
	"testing"
)

// unhex decodes a hex string written with spaces between bytes.
func unhex(t *testing.T, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(strings.Join(strings.Fields(s), ""))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func encode(t *testing.T, p *pdu) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := writePDU(&b, p); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// The expected bytes below are laid out by hand from RFC 7143 section 11.

func TestLoginRequestLayout(t *testing.T) {
	isid := [6]byte{0x80, 1, 2, 3, 4, 5}
	got := encode(t, loginRequest(true, stageSecurity, stageOperational, isid, 0x0102, 0x11223344, 7, 9, []byte("ab")))
	want := unhex(t, `
		43 81 00 00  00 00 00 02   80 01 02 03 04 05 01 02
		11 22 33 44  00 00 00 00   00 00 00 07  00 00 00 09
		00 00 00 00  00 00 00 00   00 00 00 00  00 00 00 00
		61 62 00 00`)
	if !bytes.Equal(got, want) {
		t.Errorf("login request\n got %x\nwant %x", got, want)
	}
	// Operational stage to full feature, not transiting.
	got = encode(t, loginRequest(false, stageOperational, stageFullFeature, isid, 0, 1, 1, 1, nil))
	if got[0] != 0x43 || got[1] != 0x07 || len(got) != bhsLen {
		t.Errorf("byte 0-1 = %#x %#x, len %d; want 0x43 0x07, 48", got[0], got[1], len(got))
	}
}

func TestTextRequestLayout(t *testing.T) {
	got := encode(t, textRequest(1, reservedTag, 5, 6, []byte("SendTargets=All\x00")))
	want := unhex(t, `
		04 80 00 00  00 00 00 10   00 00 00 00  00 00 00 00
		00 00 00 01  ff ff ff ff   00 00 00 05  00 00 00 06
		00 00 00 00  00 00 00 00   00 00 00 00  00 00 00 00`)
	want = append(want, "SendTargets=All\x00"...) // 16 bytes: no padding
	if !bytes.Equal(got, want) {
		t.Errorf("text request\n got %x\nwant %x", got, want)
	}
}

func TestLogoutRequestLayout(t *testing.T) {
	got := encode(t, logoutRequest(2, 8, 4))
	want := unhex(t, `
		46 80 00 00  00 00 00 00   00 00 00 00  00 00 00 00
		00 00 00 02  00 00 00 00   00 00 00 08  00 00 00 04
		00 00 00 00  00 00 00 00   00 00 00 00  00 00 00 00`)
	if !bytes.Equal(got, want) {
		t.Errorf("logout request\n got %x\nwant %x", got, want)
	}
}

func TestNopOutReplyLayout(t *testing.T) {
	in := &pdu{}
	in.bhs[0] = opNopIn
	copy(in.bhs[8:16], []byte{0, 1, 0, 0, 0, 0, 0, 0})
	copy(in.bhs[20:24], []byte{0xde, 0xad, 0xbe, 0xef})
	got := encode(t, nopOutReply(in, 3, 4))
	want := unhex(t, `
		40 80 00 00  00 00 00 00   00 01 00 00  00 00 00 00
		ff ff ff ff  de ad be ef   00 00 00 03  00 00 00 04
		00 00 00 00  00 00 00 00   00 00 00 00  00 00 00 00`)
	if !bytes.Equal(got, want) {
		t.Errorf("NOP-Out\n got %x\nwant %x", got, want)
	}
}

func TestReadLoginResponse(t *testing.T) {
	// A final login response: T=1, CSG=1, NSG=3, version active 0,
	// TSIH 0x0a0b, ITT 0, StatSN 0x100, ExpCmdSN 2, MaxCmdSN 9, status
	// 0/0, with "TargetPortalGroupTag=1\0" padded by 1 byte.
	data := "TargetPortalGroupTag=1\x00"
	raw := unhex(t, `
		23 87 00 00  00 00 00 17   80 01 02 03 04 05 0a 0b
		00 00 00 00  00 00 00 00   00 00 01 00  00 00 00 02
		00 00 00 09  00 00 00 00   00 00 00 00  00 00 00 00`)
	raw = append(raw, data...)
	raw = append(raw, 0)
	p, err := readPDU(bytes.NewReader(raw), maxDataSegment)
	if err != nil {
		t.Fatal(err)
	}
	if p.opcode() != opLoginResp || !p.loginTransit() || p.loginCSG() != stageOperational || p.loginNSG() != stageFullFeature {
		t.Errorf("opcode %#x transit %v csg %d nsg %d", p.opcode(), p.loginTransit(), p.loginCSG(), p.loginNSG())
	}
	if p.tsih() != 0x0a0b || p.statSN() != 0x100 || p.expCmdSN() != 2 || p.statusClass() != 0 || p.versionActive() != 0 {
		t.Errorf("tsih %#x statsn %#x expcmdsn %d status %d", p.tsih(), p.statSN(), p.expCmdSN(), p.statusClass())
	}
	if string(p.data) != data {
		t.Errorf("data = %q", p.data)
	}
	pairs, err := parseText(p.data)
	if err != nil || !reflect.DeepEqual(pairs, []kv{{"TargetPortalGroupTag", "1"}}) {
		t.Errorf("pairs = %v, %v", pairs, err)
	}
}

func TestReadPDUSkipsAHSAndChecksLengths(t *testing.T) {
	// A text response with a 4-byte AHS (TotalAHSLength 1) and 5 bytes of
	// data padded to 8, then a second PDU: the reader must land on it.
	first := unhex(t, `
		24 c0 00 00  01 00 00 05   00 00 00 00  00 00 00 00
		00 00 00 01  00 00 00 2a   00 00 00 00  00 00 00 00
		00 00 00 00  00 00 00 00   00 00 00 00  00 00 00 00
		aa bb cc dd`)
	first = append(first, "ab=cd\x00\x00\x00"...)
	second := make([]byte, bhsLen)
	second[0] = opLogoutResp
	r := bytes.NewReader(append(first, second...))
	p, err := readPDU(r, maxDataSegment)
	if err != nil {
		t.Fatal(err)
	}
	if p.opcode() != opTextResp || p.flags() != flagFinal|flagContinue || p.ttt() != 42 || string(p.data) != "ab=cd" {
		t.Errorf("first: opcode %#x flags %#x ttt %d data %q", p.opcode(), p.flags(), p.ttt(), p.data)
	}
	p, err = readPDU(r, maxDataSegment)
	if err != nil || p.opcode() != opLogoutResp {
		t.Fatalf("second: %v %v", p, err)
	}
	if _, err := readPDU(r, maxDataSegment); !errors.Is(err, io.EOF) {
		t.Errorf("at the end: %v, want EOF", err)
	}

	long := make([]byte, bhsLen)
	long[0], long[5] = opTextResp, 0x02 // 128 KiB
	if _, err := readPDU(bytes.NewReader(long), maxDataSegment); err == nil || !strings.Contains(err.Error(), "more than the 65536 declared") {
		t.Errorf("oversized data segment: %v", err)
	}
	short := append(make([]byte, bhsLen), 'x')
	short[7] = 5
	if _, err := readPDU(bytes.NewReader(short), maxDataSegment); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("truncated data: %v, want ErrUnexpectedEOF", err)
	}
	if _, err := readPDU(bytes.NewReader(make([]byte, 20)), maxDataSegment); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("truncated header: %v, want ErrUnexpectedEOF", err)
	}
}

func TestWritePDUPadding(t *testing.T) {
	for n, wantLen := range map[int]int{0: 48, 1: 52, 3: 52, 4: 52, 5: 56} {
		got := encode(t, &pdu{data: bytes.Repeat([]byte{'k'}, n)})
		if len(got) != wantLen {
			t.Errorf("%d data bytes: %d bytes on the wire, want %d", n, len(got), wantLen)
		}
		if dl := int(got[5])<<16 | int(got[6])<<8 | int(got[7]); dl != n {
			t.Errorf("%d data bytes: DataSegmentLength %d", n, dl)
		}
	}
}

func TestText(t *testing.T) {
	enc := encodeText(kv{"InitiatorName", "iqn.2026-01.io.example:a"}, kv{"SessionType", "Discovery"}, kv{"Empty", ""})
	if want := "InitiatorName=iqn.2026-01.io.example:a\x00SessionType=Discovery\x00Empty=\x00"; string(enc) != want {
		t.Errorf("encodeText = %q", enc)
	}
	pairs, err := parseText(append(enc, 0, 0)) // trailing NULs are padding
	if err != nil {
		t.Fatal(err)
	}
	if v, ok := lookup(pairs, "SessionType"); !ok || v != "Discovery" || len(pairs) != 3 {
		t.Errorf("pairs = %v", pairs)
	}
	// A value may contain "=".
	pairs, err = parseText([]byte("TargetAlias=a=b\x00"))
	if err != nil || pairs[0].value != "a=b" {
		t.Errorf("pairs = %v, %v", pairs, err)
	}
	for _, bad := range []string{"novalue\x00", "=v\x00"} {
		if _, err := parseText([]byte(bad)); err == nil {
			t.Errorf("parseText(%q) accepted", bad)
		}
	}
}

func TestParseSendTargets(t *testing.T) {
	text := "TargetName=iqn.2026-11.io.example:a\x00TargetAddress=10.0.0.1:3260,1\x00TargetAddress=[fd00::1]:3260,1\x00" +
		"TargetName=iqn.2026-11.io.example:b\x00"
	got, err := parseSendTargets([]byte(text))
	if err != nil {
		t.Fatal(err)
	}
	want := []Target{
		{Name: "iqn.2026-11.io.example:a", Addresses: []string{"10.0.0.1:3260,1", "[fd00::1]:3260,1"}},
		{Name: "iqn.2026-11.io.example:b"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v, want %+v", got, want)
	}
	if got, err := parseSendTargets(nil); err != nil || len(got) != 0 {
		t.Errorf("empty response: %v, %v", got, err)
	}
	for _, bad := range []string{"TargetAddress=1.2.3.4:3260,1\x00", "TargetName=\x00"} {
		if _, err := parseSendTargets([]byte(bad)); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}
