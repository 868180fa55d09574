package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"syscall"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/status"

	smbv1 "github.com/csi-node-proxy/csi-node-proxy/api/smb/v1"
	"github.com/csi-node-proxy/csi-node-proxy/internal/transport"
)

// childEnv, when set, makes the test binary a client instead: it connects
// to the address in childEnv, maps a share, prints a childResult as JSON
// and exits. Tests run it under another user ID to see what the daemon
// lets that user do.
const childEnv = "CSI_NODE_PROXY_TEST_CLIENT"

// childPassword is the secret the child sends.
const childPasswordEnv = "CSI_NODE_PROXY_TEST_PASSWORD"

// childResult is what the child reports.
type childResult struct {
	UID     int    `json:"uid"`
	DialErr string `json:"dial_err,omitempty"`
	EACCES  bool   `json:"eacces,omitempty"`
	Code    string `json:"code,omitempty"`
	Message string `json:"message,omitempty"`
}

func TestMain(m *testing.M) {
	if addr := os.Getenv(childEnv); addr != "" {
		b, _ := json.Marshal(runChild(addr, os.Getenv(childPasswordEnv)))
		fmt.Println(string(b))
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func runChild(addr, password string) childResult {
	r := childResult{UID: os.Geteuid()}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	// A raw connection first, so a refused connect shows as its errno
	// rather than as a gRPC retry.
	conn, err := transport.Dial(ctx, addr)
	if err != nil {
		r.DialErr = err.Error()
		r.EACCES = errors.Is(err, syscall.EACCES)
		return r
	}
	_ = conn.Close()
	cc, err := grpc.NewClient(transport.Target(addr), transport.DialOptions()...)
	if err != nil {
		r.DialErr = err.Error()
		return r
	}
	defer cc.Close()
	_, err = smbv1.NewSmbClient(cc).NewSmbGlobalMapping(ctx, &smbv1.NewSmbGlobalMappingRequest{
		RemotePath: `\\srv\share`, Username: `DOM\user`, Password: password,
	})
	st := status.Convert(err)
	r.Code, r.Message = st.Code().String(), st.Message()
	return r
}
