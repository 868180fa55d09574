package main

import (
	"fmt"
	"path/filepath"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/remote"
)

// Push sends the all/ layout Build wrote under out (the index of every
// image built, one platform or all three) to repo:tag, with the
// credentials of the Docker config ($DOCKER_CONFIG, ~/.docker/config.json,
// as docker login and crane auth login write it). A registry on localhost
// or 127.0.0.1 is spoken to over plain HTTP, as go-containerregistry does
// for loopback names; any other over HTTPS. It returns the reference
// pushed, with the index's digest.
func Push(out, repo, tag string, opts ...remote.Option) (name.Digest, error) {
	ref, err := name.NewTag(repo+":"+tag, name.StrictValidation)
	if err != nil {
		return name.Digest{}, fmt.Errorf("push: %w", err)
	}
	p, err := layout.FromPath(filepath.Join(out, AllLayout))
	if err != nil {
		return name.Digest{}, fmt.Errorf("push: %w", err)
	}
	idx, err := p.ImageIndex()
	if err != nil {
		return name.Digest{}, fmt.Errorf("push: %w", err)
	}
	// The layout's index.json holds one entry, the index Build wrote.
	m, err := idx.IndexManifest()
	if err != nil {
		return name.Digest{}, fmt.Errorf("push: %w", err)
	}
	if len(m.Manifests) != 1 {
		return name.Digest{}, fmt.Errorf("push: %s has %d entries, want the one Build writes", AllLayout, len(m.Manifests))
	}
	all, err := idx.ImageIndex(m.Manifests[0].Digest)
	if err != nil {
		return name.Digest{}, fmt.Errorf("push: %w", err)
	}
	opts = append([]remote.Option{remote.WithAuthFromKeychain(authn.DefaultKeychain)}, opts...)
	if err := remote.WriteIndex(ref, all, opts...); err != nil {
		return name.Digest{}, fmt.Errorf("push %s: %w", ref, err)
	}
	return ref.Context().Digest(m.Manifests[0].Digest.String()), nil
}
