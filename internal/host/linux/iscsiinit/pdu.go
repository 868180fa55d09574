package iscsiinit

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// This file encodes and decodes the few iSCSI PDUs a SendTargets discovery
// session needs (RFC 7143 section 11): Login, Text and Logout requests and
// their responses, plus Reject. Every PDU starts with a 48-byte Basic
// Header Segment (BHS); an optional Additional Header Segment and a data
// segment padded to a multiple of 4 bytes follow. Digests are never
// negotiated, so none are read or written.

// bhsLen is the size of the Basic Header Segment.
const bhsLen = 48

// Opcodes (RFC 7143 section 11.2.1.2).
const (
	opNopOut       = 0x00
	opLoginReq     = 0x03
	opTextReq      = 0x04
	opLogoutReq    = 0x06
	opNopIn        = 0x20
	opLoginResp    = 0x23
	opTextResp     = 0x24
	opLogoutResp   = 0x26
	opAsyncMessage = 0x32
	opReject       = 0x3f
)

// Flag bits of byte 1.
const (
	flagFinal    = 0x80 // F (Text); T, "transit" (Login)
	flagContinue = 0x40 // C: the text continues in the next PDU
)

// Login stages (RFC 7143 section 11.12.3): the CSG and NSG fields.
const (
	stageSecurity    = 0
	stageOperational = 1
	stageFullFeature = 3
)

// reservedTag is the "no tag" value of initiator and target transfer tags.
const reservedTag = 0xffffffff

// pdu is one iSCSI PDU: the BHS as bytes, with accessors for the fields
// discovery uses, and the data segment without padding.
type pdu struct {
	bhs  [bhsLen]byte
	data []byte
}

// Fields every BHS has (RFC 7143 section 11.2.1); sequence numbers as
// responses carry them.
func (p *pdu) opcode() byte     { return p.bhs[0] & 0x3f }
func (p *pdu) flags() byte      { return p.bhs[1] }
func (p *pdu) itt() uint32      { return binary.BigEndian.Uint32(p.bhs[16:20]) }
func (p *pdu) ttt() uint32      { return binary.BigEndian.Uint32(p.bhs[20:24]) }
func (p *pdu) statSN() uint32   { return binary.BigEndian.Uint32(p.bhs[24:28]) }
func (p *pdu) expCmdSN() uint32 { return binary.BigEndian.Uint32(p.bhs[28:32]) }
func (p *pdu) dataLength() uint32 {
	return uint32(p.bhs[5])<<16 | uint32(p.bhs[6])<<8 | uint32(p.bhs[7])
}

// Login response fields (RFC 7143 section 11.13).
func (p *pdu) loginTransit() bool  { return p.bhs[1]&flagFinal != 0 }
func (p *pdu) loginCSG() byte      { return p.bhs[1] >> 2 & 3 }
func (p *pdu) loginNSG() byte      { return p.bhs[1] & 3 }
func (p *pdu) versionActive() byte { return p.bhs[3] }
func (p *pdu) tsih() uint16        { return binary.BigEndian.Uint16(p.bhs[14:16]) }
func (p *pdu) statusClass() byte   { return p.bhs[36] }
func (p *pdu) statusDetail() byte  { return p.bhs[37] }

// rejectReason is the Reason field of a Reject (11.17.1).
func (p *pdu) rejectReason() byte { return p.bhs[2] }

// loginRequest builds a Login Request (RFC 7143 section 11.12): always
// immediate, version 0 (max and min), connection ID 0.
func loginRequest(transit bool, csg, nsg byte, isid [6]byte, tsih uint16, itt, cmdSN, expStatSN uint32, data []byte) *pdu {
	p := &pdu{data: data}
	p.bhs[0] = 0x40 | opLoginReq
	p.bhs[1] = csg<<2 | nsg
	if transit {
		p.bhs[1] |= flagFinal
	}
	copy(p.bhs[8:14], isid[:])
	binary.BigEndian.PutUint16(p.bhs[14:16], tsih)
	binary.BigEndian.PutUint32(p.bhs[16:20], itt)
	binary.BigEndian.PutUint32(p.bhs[24:28], cmdSN)
	binary.BigEndian.PutUint32(p.bhs[28:32], expStatSN)
	return p
}

// textRequest builds a final Text Request (RFC 7143 section 11.10) on LUN
// 0. ttt is reservedTag for a new exchange and the target's tag when
// asking for the continuation of a long response.
func textRequest(itt, ttt, cmdSN, expStatSN uint32, data []byte) *pdu {
	p := &pdu{data: data}
	p.bhs[0] = opTextReq
	p.bhs[1] = flagFinal
	binary.BigEndian.PutUint32(p.bhs[16:20], itt)
	binary.BigEndian.PutUint32(p.bhs[20:24], ttt)
	binary.BigEndian.PutUint32(p.bhs[24:28], cmdSN)
	binary.BigEndian.PutUint32(p.bhs[28:32], expStatSN)
	return p
}

// logoutRequest builds an immediate Logout Request (RFC 7143 section
// 11.14) with reason 0, "close the session".
func logoutRequest(itt, cmdSN, expStatSN uint32) *pdu {
	p := &pdu{}
	p.bhs[0] = 0x40 | opLogoutReq
	p.bhs[1] = flagFinal // reason code 0
	binary.BigEndian.PutUint32(p.bhs[16:20], itt)
	binary.BigEndian.PutUint32(p.bhs[24:28], cmdSN)
	binary.BigEndian.PutUint32(p.bhs[28:32], expStatSN)
	return p
}

// nopOutReply answers a NOP-In that asks for one (its target transfer
// tag is not reservedTag) as RFC 7143 section 11.18 requires.
func nopOutReply(in *pdu, cmdSN, expStatSN uint32) *pdu {
	p := &pdu{}
	p.bhs[0] = 0x40 | opNopOut
	p.bhs[1] = flagFinal
	copy(p.bhs[8:16], in.bhs[8:16]) // LUN
	binary.BigEndian.PutUint32(p.bhs[16:20], reservedTag)
	binary.BigEndian.PutUint32(p.bhs[20:24], in.ttt())
	binary.BigEndian.PutUint32(p.bhs[24:28], cmdSN)
	binary.BigEndian.PutUint32(p.bhs[28:32], expStatSN)
	return p
}

// maxDataSegment is the MaxRecvDataSegmentLength this initiator declares;
// readPDU refuses longer data segments from the target.
const maxDataSegment = 65536

// writePDU writes p with its data segment length set and the data padded
// to a multiple of 4 bytes. It writes in one call so a PDU is never split
// between writes.
func writePDU(w io.Writer, p *pdu) error {
	n := len(p.data)
	if n > 1<<24-1 {
		return fmt.Errorf("iscsi: data segment of %d bytes is too long", n)
	}
	p.bhs[4] = 0 // no AHS
	p.bhs[5], p.bhs[6], p.bhs[7] = byte(n>>16), byte(n>>8), byte(n)
	buf := make([]byte, 0, bhsLen+n+3)
	buf = append(buf, p.bhs[:]...)
	buf = append(buf, p.data...)
	buf = append(buf, make([]byte, pad(n))...)
	_, err := w.Write(buf)
	return err
}

// readPDU reads one PDU, skipping any AHS and the padding. A data segment
// longer than maxData is a protocol error: the target must respect the
// MaxRecvDataSegmentLength declared at login.
func readPDU(r io.Reader, maxData int) (*pdu, error) {
	p := &pdu{}
	if _, err := io.ReadFull(r, p.bhs[:]); err != nil {
		return nil, err
	}
	if ahs := int(p.bhs[4]) * 4; ahs > 0 {
		if _, err := io.CopyN(io.Discard, r, int64(ahs)); err != nil {
			return nil, err
		}
	}
	n := int(p.dataLength())
	if n > maxData {
		return nil, fmt.Errorf("iscsi: target sent a %d-byte data segment (opcode %#02x), more than the %d declared", n, p.opcode(), maxData)
	}
	buf := make([]byte, n+pad(n))
	if _, err := io.ReadFull(r, buf); err != nil {
		if errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return nil, err
	}
	p.data = buf[:n]
	return p, nil
}

func pad(n int) int { return (4 - n%4) % 4 }

// kv is one key=value pair of iSCSI text (RFC 7143 section 6).
type kv struct{ key, value string }

// encodeText encodes pairs as iSCSI text: each "key=value" ends with NUL.
func encodeText(pairs ...kv) []byte {
	var b bytes.Buffer
	for _, p := range pairs {
		b.WriteString(p.key)
		b.WriteByte('=')
		b.WriteString(p.value)
		b.WriteByte(0)
	}
	return b.Bytes()
}

// parseText decodes iSCSI text into pairs in order. Empty strings between
// NULs (which some targets send as padding) are skipped; a string without
// "=" is an error.
func parseText(data []byte) ([]kv, error) {
	var out []kv
	for _, s := range bytes.Split(data, []byte{0}) {
		if len(s) == 0 {
			continue
		}
		k, v, ok := bytes.Cut(s, []byte{'='})
		if !ok || len(k) == 0 {
			return nil, fmt.Errorf("iscsi: malformed text key-value %q", s)
		}
		out = append(out, kv{string(k), string(v)})
	}
	return out, nil
}

// lookup returns the value of key in pairs.
func lookup(pairs []kv, key string) (string, bool) {
	for _, p := range pairs {
		if p.key == key {
			return p.value, true
		}
	}
	return "", false
}
