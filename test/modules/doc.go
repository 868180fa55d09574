// Package modules checks the repository's Go modules as a driver sees
// them (make modules, part of make test):
//
//   - TestGoDirective: the root module, the one a driver imports, states
//     the oldest go directive its dependencies allow, that is the highest
//     go directive among them, so that requiring it never raises a
//     driver's go line beyond what a dependency already forces;
//   - TestOfflineGoGet: the root module, packed from the working tree as a
//     tag would serve it into a file-system module proxy, is what a fresh
//     driver module go gets, builds (linux and windows) and tidies with no
//     network, without the cmd module (the daemon's) or any other module
//     of this repository in its graph;
//   - TestRootRequiresNoTools: the root module requires none of the
//     modules only the tools need (golang.org/x/tools for convgen's
//     engine, golang.org/x/mod for these checks), which live in the cmd
//     module and in this one.
//
// The first two need the go command; the second needs the module cache
// to hold the root module's dependencies (go mod download in the root
// module).
package modules
