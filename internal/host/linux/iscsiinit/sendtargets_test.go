package iscsiinit

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/csi-node-proxy/csi-node-proxy/errdefs"
)

// fakeTarget is a scripted iSCSI target speaking just enough of RFC 7143
// to test the discovery client's state machine: stage transitions, tags
// and sequence numbers, continuation, NOP-In, rejections. It checks what
// the initiator sends and records it.
type fakeTarget struct {
	t  *testing.T
	ln net.Listener

	// Script.
	loginStatus  [2]byte // class, detail of the first login response
	redirectTo   string  // with loginStatus {1, 1}
	authMethod   string  // AuthMethod the target answers (default None)
	notTransit   int     // answer this many login requests without T
	text         string  // the SendTargets response text
	chunk        int     // split the text into PDUs of this many bytes
	nopIn        bool    // send a NOP-In asking for a reply first
	silent       bool    // accept, then never answer
	closeOnLogin bool    // accept, then close when the login arrives

	mu      sync.Mutex
	log     []string
	done    chan struct{}
	nopSeen bool
}

func startFakeTarget(t *testing.T, ft *fakeTarget) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ft.t, ft.ln, ft.done = t, ln, make(chan struct{})
	t.Cleanup(func() {
		ln.Close()
		<-ft.done
	})
	go ft.serve()
	return ln.Addr().String()
}

func (ft *fakeTarget) record(format string, args ...any) {
	ft.mu.Lock()
	defer ft.mu.Unlock()
	ft.log = append(ft.log, fmt.Sprintf(format, args...))
}

func (ft *fakeTarget) serve() {
	defer close(ft.done)
	conn, err := ft.ln.Accept()
	if err != nil {
		return
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
	rd := bufio.NewReader(conn)
	var statSN uint32 = 0x1000
	var expCmdSN uint32
	var textOff int
	const ttt = 0x77
	send := func(p *pdu) {
		binary.BigEndian.PutUint32(p.bhs[24:28], statSN)
		binary.BigEndian.PutUint32(p.bhs[28:32], expCmdSN)
		binary.BigEndian.PutUint32(p.bhs[32:36], expCmdSN+16)
		statSN++
		if err := writePDU(conn, p); err != nil {
			ft.t.Errorf("fake target write: %v", err)
		}
	}
	for {
		req, err := readPDU(rd, 1<<20)
		if err != nil {
			return
		}
		if ft.silent {
			continue
		}
		if got, want := binary.BigEndian.Uint32(req.bhs[28:32]), statSN; req.opcode() != opNopOut && statSN != 0x1000 && got != want {
			ft.t.Errorf("opcode %#x: ExpStatSN %#x, want %#x", req.opcode(), got, want)
		}
		cmdSN := binary.BigEndian.Uint32(req.bhs[24:28])
		switch req.opcode() {
		case opLoginReq:
			if ft.closeOnLogin {
				return
			}
			if req.bhs[8]&0xc0 != 0x80 {
				ft.t.Errorf("ISID type %#x, want random (0x80)", req.bhs[8]&0xc0)
			}
			csg, nsg, transit := req.bhs[1]>>2&3, req.bhs[1]&3, req.bhs[1]&0x80 != 0
			pairs, err := parseText(req.data)
			if err != nil {
				ft.t.Errorf("login text: %v", err)
			}
			ft.record("login csg=%d nsg=%d T=%v cmdsn=%d %v", csg, nsg, transit, cmdSN, pairs)
			expCmdSN = cmdSN
			resp := &pdu{}
			resp.bhs[0] = opLoginResp
			copy(resp.bhs[8:14], req.bhs[8:14])
			copy(resp.bhs[16:20], req.bhs[16:20])
			if ft.loginStatus[0] != 0 {
				resp.bhs[36], resp.bhs[37] = ft.loginStatus[0], ft.loginStatus[1]
				if ft.redirectTo != "" {
					resp.data = encodeText(kv{"TargetAddress", ft.redirectTo})
				}
				send(resp)
				return
			}
			if ft.notTransit > 0 {
				ft.notTransit--
				resp.bhs[1] = csg << 2
				send(resp)
				continue
			}
			resp.bhs[1] = 0x80 | csg<<2 | nsg
			switch csg {
			case stageSecurity:
				m := ft.authMethod
				if m == "" {
					m = "None"
				}
				resp.data = encodeText(kv{"AuthMethod", m}, kv{"TargetPortalGroupTag", "1"})
			case stageOperational:
				resp.data = encodeText(kv{"HeaderDigest", "None"}, kv{"DataDigest", "None"}, kv{"MaxRecvDataSegmentLength", "8192"})
			}
			if nsg == stageFullFeature {
				binary.BigEndian.PutUint16(resp.bhs[14:16], 0x1234)
			}
			send(resp)
		case opTextReq:
			if cmdSN != expCmdSN {
				ft.t.Errorf("text request CmdSN %d, want %d", cmdSN, expCmdSN)
			}
			expCmdSN++
			ft.record("text F=%v ttt=%#x cmdsn=%d data=%q", req.flags()&flagFinal != 0, req.ttt(), cmdSN, req.data)
			if textOff == 0 && req.ttt() != reservedTag {
				ft.t.Errorf("first text request TTT %#x", req.ttt())
			}
			if textOff > 0 && (req.ttt() != ttt || len(req.data) != 0) {
				ft.t.Errorf("continuation request TTT %#x data %q", req.ttt(), req.data)
			}
			if ft.nopIn && !ft.nopSeen {
				nop := &pdu{}
				nop.bhs[0] = opNopIn
				nop.bhs[1] = 0x80
				binary.BigEndian.PutUint32(nop.bhs[16:20], reservedTag)
				binary.BigEndian.PutUint32(nop.bhs[20:24], 0x99)
				send(nop)
				reply, err := readPDU(rd, 1<<20)
				if err != nil || reply.opcode() != opNopOut || reply.ttt() != 0x99 || reply.itt() != reservedTag {
					ft.t.Errorf("NOP-Out reply: %+v %v", reply, err)
				}
				ft.nopSeen = true
				ft.record("nop-out ttt=%#x", reply.ttt())
			}
			end := len(ft.text)
			if ft.chunk > 0 && textOff+ft.chunk < end {
				end = textOff + ft.chunk
			}
			resp := &pdu{data: []byte(ft.text[textOff:end])}
			resp.bhs[0] = opTextResp
			copy(resp.bhs[16:20], req.bhs[16:20])
			textOff = end
			if textOff < len(ft.text) {
				resp.bhs[1] = flagContinue
				binary.BigEndian.PutUint32(resp.bhs[20:24], ttt)
			} else {
				resp.bhs[1] = flagFinal
				binary.BigEndian.PutUint32(resp.bhs[20:24], reservedTag)
			}
			send(resp)
		case opLogoutReq:
			ft.record("logout reason=%d cmdsn=%d", req.bhs[1]&0x7f, cmdSN)
			resp := &pdu{}
			resp.bhs[0] = opLogoutResp
			resp.bhs[1] = 0x80
			copy(resp.bhs[16:20], req.bhs[16:20])
			send(resp)
			return
		default:
			ft.t.Errorf("fake target: unexpected opcode %#x", req.opcode())
			return
		}
	}
}

const twoTargets = "TargetName=iqn.2026-11.io.example:one\x00TargetAddress=127.0.0.1:3260,1\x00" +
	"TargetName=iqn.2026-11.io.example:two\x00TargetAddress=127.0.0.1:3260,1\x00"

func discoverFake(t *testing.T, ft *fakeTarget, timeout time.Duration) ([]Target, error) {
	t.Helper()
	addr := startFakeTarget(t, ft)
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	return SendTargets(ctx, addr, "iqn.2026-11.io.example:initiator")
}

func TestSendTargets_FakeTarget_Exchange(t *testing.T) {
	ft := &fakeTarget{text: twoTargets}
	got, err := discoverFake(t, ft, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].Name != "iqn.2026-11.io.example:one" || got[1].Name != "iqn.2026-11.io.example:two" {
		t.Fatalf("targets = %+v", got)
	}
	<-ft.done
	want := []string{
		"login csg=0 nsg=1 T=true cmdsn=1 [{InitiatorName iqn.2026-11.io.example:initiator} {SessionType Discovery} {AuthMethod None}]",
		"login csg=1 nsg=3 T=true cmdsn=1 [{HeaderDigest None} {DataDigest None} {MaxRecvDataSegmentLength 65536}]",
		`text F=true ttt=0xffffffff cmdsn=1 data="SendTargets=All\x00"`,
		"logout reason=0 cmdsn=2",
	}
	if !reflect.DeepEqual(ft.log, want) {
		t.Errorf("exchange:\n%s\nwant:\n%s", strings.Join(ft.log, "\n"), strings.Join(want, "\n"))
	}
}

func TestSendTargets_FakeTarget_ContinuationSplitsKeys(t *testing.T) {
	// 7-byte chunks split names and values across PDUs; the C bit says
	// "more", and the client must ask with the target's tag.
	ft := &fakeTarget{text: twoTargets, chunk: 7, nopIn: true}
	got, err := discoverFake(t, ft, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	want := []Target{
		{Name: "iqn.2026-11.io.example:one", Addresses: []string{"127.0.0.1:3260,1"}},
		{Name: "iqn.2026-11.io.example:two", Addresses: []string{"127.0.0.1:3260,1"}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("targets = %+v", got)
	}
	<-ft.done
	texts := 0
	for _, l := range ft.log {
		if strings.HasPrefix(l, "text ") {
			texts++
		}
	}
	if wantTexts := (len(twoTargets) + 6) / 7; texts != wantTexts {
		t.Errorf("%d text requests, want %d", texts, wantTexts)
	}
	if !ft.nopSeen {
		t.Error("the NOP-In was not answered")
	}
}

func TestSendTargets_FakeTarget_TargetTakesExtraRounds(t *testing.T) {
	ft := &fakeTarget{text: twoTargets, notTransit: 2}
	if _, err := discoverFake(t, ft, 5*time.Second); err != nil {
		t.Fatal(err)
	}
}

func TestSendTargets_FakeTarget_NoTargets(t *testing.T) {
	got, err := discoverFake(t, &fakeTarget{}, 5*time.Second)
	if err != nil || len(got) != 0 {
		t.Fatalf("got %v, %v; want no targets", got, err)
	}
}

func TestSendTargets_FakeTarget_LoginRejected(t *testing.T) {
	for name, tc := range map[string]struct {
		ft   *fakeTarget
		kind error
		msg  string
	}{
		"authentication failure": {&fakeTarget{loginStatus: [2]byte{2, 1}}, errdefs.ErrPermissionDenied, "authentication failure (status 0x0201)"},
		"authorization failure":  {&fakeTarget{loginStatus: [2]byte{2, 2}}, errdefs.ErrPermissionDenied, "this initiator is not allowed"},
		"not found":              {&fakeTarget{loginStatus: [2]byte{2, 3}}, errdefs.ErrNotFound, "target not found"},
		"no discovery sessions":  {&fakeTarget{loginStatus: [2]byte{2, 9}}, errdefs.ErrFailedPrecondition, "does not support discovery"},
		"out of resources":       {&fakeTarget{loginStatus: [2]byte{3, 2}}, errdefs.ErrUnavailable, "out of resources"},
		"redirect":               {&fakeTarget{loginStatus: [2]byte{1, 1}, redirectTo: "10.9.9.9:3260,1"}, errdefs.ErrUnavailable, "redirects to 10.9.9.9:3260,1"},
		"CHAP required":          {&fakeTarget{authMethod: "CHAP"}, errdefs.ErrPermissionDenied, "requires discovery authentication (AuthMethod=CHAP)"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := discoverFake(t, tc.ft, 5*time.Second)
			if !errors.Is(err, tc.kind) || !strings.Contains(err.Error(), tc.msg) {
				t.Fatalf("err = %v, want %v containing %q", err, tc.kind, tc.msg)
			}
		})
	}
}

func TestSendTargets_FakeTarget_Unresponsive(t *testing.T) {
	start := time.Now()
	_, err := discoverFake(t, &fakeTarget{silent: true}, 300*time.Millisecond)
	if !errors.Is(err, errdefs.ErrUnavailable) || !strings.Contains(err.Error(), "no answer in time") {
		t.Fatalf("err = %v, want ErrUnavailable (no answer in time)", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("took %v", d)
	}
}

func TestSendTargets_FakeTarget_ConnectionDropped(t *testing.T) {
	_, err := discoverFake(t, &fakeTarget{closeOnLogin: true}, 5*time.Second)
	if !errors.Is(err, errdefs.ErrUnavailable) || !strings.Contains(err.Error(), "connection lost") {
		t.Fatalf("err = %v, want ErrUnavailable (connection lost)", err)
	}
}

func TestSendTargets_Cancelled(t *testing.T) {
	addr := startFakeTarget(t, &fakeTarget{silent: true})
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel)
	_, err := SendTargets(ctx, addr, "iqn.2026-11.io.example:initiator")
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
}

func TestSendTargets_NothingListening(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	_, err = SendTargets(context.Background(), addr, "iqn.2026-11.io.example:initiator")
	if !errors.Is(err, errdefs.ErrUnavailable) || !strings.Contains(err.Error(), "connection refused") {
		t.Fatalf("err = %v, want ErrUnavailable (connection refused)", err)
	}
}

func TestGeneratedInitiatorName(t *testing.T) {
	for host, want := range map[string]string{
		"Node-1.Example.COM": "iqn.2026-01.io.github.csi-node-proxy:node-1.example.com",
		"we_ird host":        "iqn.2026-01.io.github.csi-node-proxy:we-ird-host",
		"":                   "iqn.2026-01.io.github.csi-node-proxy:node",
	} {
		if got := GeneratedInitiatorName(host); got != want {
			t.Errorf("GeneratedInitiatorName(%q) = %q, want %q", host, got, want)
		}
	}
}
