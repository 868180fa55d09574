package policy

import (
	"context"
	"crypto/sha256"
	"fmt"
	"io"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/klog/v2"
)

// maxFileSize bounds a policy file; a larger one is refused unread.
const maxFileSize = 4 << 20

// DefaultReloadInterval is how often Watch looks at the policy file.
const DefaultReloadInterval = 10 * time.Second

// Store holds the policy of one file and replaces it atomically when the
// file changes to a valid policy. Calls decide against whichever policy is
// current when they arrive.
type Store struct {
	path string
	opts Options

	cur      atomic.Pointer[Policy]
	failures atomic.Uint64 // reloads that found a broken file
	reloads  atomic.Uint64 // reloads that installed a new policy

	mu         sync.Mutex // serialises Reload
	goodHash   [32]byte   // content of the current policy
	failedHash [32]byte   // content that last failed, so it is reported once
	failedErr  string     // the error that last failed, ditto
	onReload   func(*Policy)
}

// Load reads the policy file at path. Any problem is an error, and the
// daemon must not start: starting without the policy the operator asked
// for would open up what the policy closes.
func Load(path string, o Options) (*Store, error) {
	s := &Store{path: path, opts: o}
	p, sum, err := s.read()
	if err != nil {
		return nil, fmt.Errorf("policy %s: %w", path, err)
	}
	s.cur.Store(p)
	s.goodHash = sum
	return s, nil
}

// Static returns a Store holding p for good: for a policy that was given
// rather than read from a file (library mode's Options.PolicyData). Its
// Reload and Watch do nothing. p must not be nil; a Store with no policy
// is a nil *Store.
func Static(p *Policy) *Store {
	s := &Store{}
	s.cur.Store(p)
	return s
}

// Path returns the policy file's path; "" for a Static Store.
func (s *Store) Path() string { return s.path }

// Policy returns the current policy; nil (allow everything) from a nil
// Store, which is no policy.
func (s *Store) Policy() *Policy {
	if s == nil {
		return nil
	}
	return s.cur.Load()
}

// Decide decides c against the current policy. A nil Store allows
// everything, as no policy does.
func (s *Store) Decide(c Call) Decision { return s.DecideContext(context.Background(), &c) }

// DecideContext is Decide asking the node about disks and volumes under
// ctx (Policy.DecideContext).
func (s *Store) DecideContext(ctx context.Context, c *Call) Decision {
	if s == nil {
		return Decision{Allowed: true}
	}
	return s.cur.Load().DecideContext(ctx, c)
}

// Failures returns how many reloads found the file unreadable or invalid
// (each distinct content or error counts once).
func (s *Store) Failures() uint64 { return s.failures.Load() }

// Reloads returns how many times a changed, valid file replaced the
// policy.
func (s *Store) Reloads() uint64 { return s.reloads.Load() }

// Reload reads the file again. A changed, valid file replaces the policy
// (changed is true). A file that cannot be read or is invalid, deleted
// included, leaves the current policy in force and returns the error; the
// first time a given content or error is seen it is also counted and
// logged.
func (s *Store) Reload() (changed bool, err error) {
	if s.path == "" {
		return false, nil // Static: there is no file to read
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	p, sum, err := s.read()
	if err != nil {
		if sum != s.failedHash || err.Error() != s.failedErr {
			s.failedHash, s.failedErr = sum, err.Error()
			s.failures.Add(1)
			klog.ErrorS(err, "Policy file not reloaded; the previous policy stays in force", "path", s.path, "rules", s.cur.Load().Rules())
		}
		return false, err
	}
	s.failedHash, s.failedErr = [32]byte{}, ""
	if sum == s.goodHash {
		return false, nil
	}
	s.cur.Store(p)
	s.goodHash = sum
	s.reloads.Add(1)
	klog.InfoS("Policy reloaded", "path", s.path, "rules", p.Rules())
	if s.onReload != nil {
		s.onReload(p)
	}
	return true, nil
}

// OnReload has f called with each policy Reload (or Watch) installs,
// once it is in force, so that what depends on the policy's content (the
// daemon's identity warnings) follows it. Calls are made one at a time,
// in the order the policies were installed, and hold up the next reload
// until they return. A Static Store never calls f. nil removes it.
func (s *Store) OnReload(f func(*Policy)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.onReload = f
}

// Watch reloads the file every interval until ctx ends. It polls instead
// of using file notifications, which miss the symlink swaps of Kubernetes
// ConfigMap volumes and need no extra dependency; reading a small file
// every few seconds costs nothing.
func (s *Store) Watch(ctx context.Context, interval time.Duration) {
	if interval <= 0 || s.path == "" {
		return
	}
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			_, _ = s.Reload() // Reload logs and counts failures itself
		}
	}
}

// read opens, checks, reads and compiles the file. sum is the content's
// hash, or zero when it could not be read.
func (s *Store) read() (p *Policy, sum [32]byte, err error) {
	f, err := os.Open(s.path)
	if err != nil {
		return nil, sum, err
	}
	defer f.Close() //nolint:errcheck // read-only; the content has been read or the error reported
	fi, err := f.Stat()
	if err != nil {
		return nil, sum, err
	}
	if !fi.Mode().IsRegular() {
		return nil, sum, fmt.Errorf("not a regular file (%s)", fi.Mode().Type())
	}
	if err := checkOwner(fi); err != nil {
		return nil, sum, err
	}
	data, err := io.ReadAll(io.LimitReader(f, maxFileSize+1))
	if err != nil {
		return nil, sum, err
	}
	if len(data) > maxFileSize {
		return nil, sum, fmt.Errorf("larger than %d bytes", maxFileSize)
	}
	sum = sha256.Sum256(data)
	p, err = Parse(data, s.opts)
	return p, sum, err
}
