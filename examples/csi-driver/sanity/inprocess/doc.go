// Package inprocess runs csi-sanity against the example driver in library
// mode (Linux, root): see inprocess_linux_test.go.
package inprocess
