package hostile

import (
	"strings"

	"google.golang.org/grpc/codes"
)

// The hostile inputs, by kind, with the code a Linux host must answer. The
// table is built for a sandbox (the daemon's working directories and the
// decoys around them), so the same inputs drive the daemon in
// TestHostileInputs and seed the validators' fuzz corpora (TestFuzzCorpus,
// with defaultSandbox).

// sandbox names the directories the daemon works in and the decoys around
// them.
type sandbox struct {
	// Root holds everything of the test: the working directories, the
	// decoys, the sockets, the loop disks' backing files.
	Root string
	// Kubelet is the daemon's -kubelet-path, CSI its -working-dir.
	Kubelet, CSI string
	// RootDev is the block device of "/": a real device outside the
	// sandbox.
	RootDev string
	// Probe is a name no file outside the sandbox has; the suite checks
	// that nothing of that name appears in the system directories it
	// aims at.
	Probe string
}

// defaultSandbox is the sandbox the fuzz seeds are written for.
var defaultSandbox = sandbox{
	Root:    "/var/lib",
	Kubelet: "/var/lib/kubelet",
	CSI:     "/var/lib/csi",
	RootDev: "/dev/vda",
	Probe:   "csi-hostile-probe",
}

// Outside is a decoy directory tree beside the working directories:
// Outside/victim/{file,sub/file} must survive every call.
func (s sandbox) Outside() string { return s.Root + "/outside" }

// Plugins is a working directory nested in the kubelet one
// (-working-dir=<kubelet>/plugins), holding drv/data.
func (s sandbox) Plugins() string { return s.Kubelet + "/plugins" }

// Registry is a second nested working directory, on which volume B is
// mounted (as a kubelet directory on its own disk is), so an unmount
// aimed at it reaches the backend.
func (s sandbox) Registry() string { return s.Kubelet + "/plugins_registry" }

// Sibling is a decoy directory whose name extends the kubelet
// directory's: Kubelet + "-x", with data/file in it.
func (s sandbox) Sibling() string { return s.Kubelet + "-x" }

// The well-formed values that go beside a hostile one in the same request.
const (
	goodRemote = `\\127.0.0.1\hostile`
	goodUser   = `CSI\hostile`
	goodPass   = "hostile-password"
	goodIQN    = "iqn.2003-01.org.example:hostile"
)

// input is one hostile value and the code the Linux host must answer.
type input struct {
	value string
	want  codes.Code
	// what says what the value tries, for failure messages.
	what string
}

// pathInput is a hostile path.
type pathInput struct {
	input
	// real marks a path that names an existing object outside the
	// sandbox (/etc/shadow, /dev/vda). Such paths are never given to a
	// removal (Rmdir, RmdirContents): if a validator failed, the suite
	// must destroy nothing but its own decoys. Removals get the decoys
	// and the probe names instead, which the same lexical check refuses.
	real bool
}

func ia(v, what string) input { return input{v, codes.InvalidArgument, what} }
func pd(v, what string) input { return input{v, codes.PermissionDenied, what} }
func nf(v, what string) input { return input{v, codes.NotFound, what} }

// badPaths are paths every path field of every version must refuse:
// malformed ones (InvalidArgument) and well-formed ones outside the working
// directories (PermissionDenied).
func badPaths(s sandbox) []pathInput {
	k, p := s.Kubelet, s.Probe
	long := k + "/pods/" + strings.Repeat("a", 4200)
	var out []pathInput
	add := func(in input, real bool) { out = append(out, pathInput{in, real}) }
	for _, in := range []input{
		// Malformed: InvalidArgument.
		ia("", "empty"),
		ia("kubelet/pods/x", "relative"),
		ia("./pods", "relative with ."),
		ia("pods", "bare name"),
		ia("~/x", "home-relative"),
		ia(".", "dot"),
		ia("..", "dot-dot"),
		ia("../etc", "relative traversal"),
		ia(" "+k, "leading space (relative)"),
		ia("\t"+k, "leading tab"),
		ia("/..", "root dot-dot"),
		ia("/../"+strings.TrimPrefix(k, "/"), "dot-dot above / and back in"),
		ia(k+"/..", "working dir dot-dot"),
		ia(k+"/../etc", "<kubelet>/../etc"),
		ia(k+"/../outside/victim", "dot-dot to the decoy"),
		ia(k+"/pods/../../outside/victim", "two dot-dots to the decoy"),
		ia(k+"/pods/../../../../../../etc/"+p, "deep traversal to /etc"),
		ia(k+"/pods/ok/..", "dot-dot that stays inside"),
		ia(k+"/./pods/../pods/ok", "dot and dot-dot that stay inside"),
		ia(k+"//..//outside", "doubled separators around dot-dot"),
		ia(k+"/pods/..//..//outside/victim", "dot-dot with doubled separators"),
		ia(k+"/pods/ok/../../../kubelet-x/data", "dot-dot into the sibling decoy"),
		ia(k+"-x/../kubelet/pods", "sibling then dot-dot back"),
		ia(k+"/pods/../", "dot-dot with a trailing slash"),
		ia(k+"/pods/./../../outside", "dot then dot-dot"),
		ia(k+"/pods/a\x00b", "NUL"),
		ia(k+"\x00/../../etc", "NUL before a traversal"),
		ia("\x00", "only NUL"),
		ia(k+"/pods/a\nb", "newline"),
		ia(k+"/pods/a\rb", "carriage return"),
		ia(k+"/pods/\x1b[2J", "terminal escape"),
		ia(k+"/pods/a\x7fb", "DEL"),
		ia(k+"/pods/a\x01b", "SOH"),
		ia(k+"/pods/a\u0085b", "C1 control NEL (U+0085)"),
		ia(k+"/pods/a\u009bb", "C1 control CSI (U+009B)"),
		ia(long, "over 4096 bytes"),
		ia(k+strings.Repeat("/a", 2100), "over 4096 bytes in short elements"),
		ia(k+"/pods/"+strings.Repeat("n", 256), "an element over NAME_MAX (255 bytes)"),
		ia(`\\server\share\x`, "UNC path"),
		ia(`\\?\`+k, `\\?\ device path`),
		ia(`\\.\pipe\csi-proxy-disk-v1`, `\\.\ device path`),
		ia(`\\?\UNC\server\share\x`, `\\?\UNC path`),
		ia(`\??\C:\Windows`, `NT object path`),
		ia(`C:\var\lib\kubelet`, "Windows drive path"),
		ia(`C:/var/lib/kubelet`, "Windows drive path with slashes"),
		ia(`c:`+k, "drive-relative Windows path"),
		ia("file://"+k, "URL"),
		ia("%2e%2e/etc", "URL-encoded traversal (relative)"),
		ia("$(id)", "command substitution"),
	} {
		add(in, false)
	}
	// Outside the working directories: PermissionDenied. Existing objects
	// of the system (real) and decoys and probe names (not real).
	for _, in := range []input{
		pd("/", "/"),
		pd("/etc", "/etc"),
		pd("/etc/shadow", "/etc/shadow"),
		pd("/proc", "/proc"),
		pd("/proc/self/root", "/proc magic link"),
		pd("/proc/1/root/etc", "pid 1's root"),
		pd("/proc/self/cwd", "/proc/self/cwd"),
		pd("/sys", "/sys"),
		pd("/sys/block", "/sys/block"),
		pd("/dev", "/dev"),
		pd(s.RootDev, "the root disk's device"),
		pd("/dev/null", "/dev/null"),
		pd("/root", "/root"),
		pd("/run", "/run"),
		pd("/tmp", "/tmp"),
		pd("/var/lib/kubelet", "the default kubelet path (not a working dir here)"),
		pd("/var/lib/csi-node-proxy/smb", "the SMB backend's mount root"),
		pd(s.Root, "the sandbox root (parent of the working dirs)"),
		pd("//server/share", "double-slash UNC look-alike"),
		pd("//?/C:/x", "device path with slashes"),
	} {
		if in.value == s.Root && s == defaultSandbox {
			continue // /var/lib is already listed
		}
		add(in, true)
	}
	for _, in := range []input{
		pd("/"+p, "a new name in /"),
		pd("/etc/"+p, "a new name in /etc"),
		pd("/dev/"+p, "a new name in /dev"),
		pd("/tmp/"+p, "a new name in /tmp"),
		pd(s.Outside(), "the decoy directory"),
		pd(s.Outside()+"/victim", "a decoy directory with files"),
		pd(s.Sibling(), "<kubelet>-x sibling prefix"),
		pd(s.Sibling()+"/data", "below the <kubelet>-x sibling"),
		pd(s.Sibling()+"/", "<kubelet>-x with a trailing slash"),
		pd(k+"x", "<kubelet>x"),
		pd(k+" ", "<kubelet> with a trailing space"),
		pd(k+".", "<kubelet>. (a sibling on POSIX)"),
		pd(k[:len(k)-1], "a prefix of <kubelet>"),
		pd(s.CSI+"-x", "<working-dir>-x"),
		pd(strings.ToUpper(k), "<kubelet> in upper case (POSIX is case-sensitive)"),
	} {
		add(in, false)
	}
	return out
}

// workingDirItself are spellings of a working directory itself, which no
// removal may take (PermissionDenied).
func workingDirItself(s sandbox) []input {
	k := s.Kubelet
	return []input{
		pd(k, "the kubelet working dir"),
		pd(k+"/", "the kubelet working dir, trailing slash"),
		pd(k+"/.", "the kubelet working dir, trailing /."),
		pd(k+"//", "the kubelet working dir, trailing //"),
		pd(k+"/./", "the kubelet working dir, trailing /./"),
		pd("/"+k, "the kubelet working dir, leading //"),
		pd(s.CSI, "the other working dir"),
		pd(s.CSI+"/", "the other working dir, trailing slash"),
	}
}

// link is a symlink the suite plants inside a working directory, pointing
// somewhere a caller must not reach through it.
type link struct {
	// at is the link's path, below a working directory; to its text.
	at, to string
	// decoy tells that the link leads into the sandbox's decoys, so
	// removals and mounts through it are safe to try; links into the
	// system (/etc, /) only get calls that create a probe name or remove
	// a name that does not exist.
	decoy bool
	// child is a name below the link's target: an existing one for
	// decoys (removals must leave it), the probe name for the system.
	child string
	what  string
}

// escapeLinks are the symlinks inside the working directories that lead
// out of them.
func escapeLinks(s sandbox) []link {
	k, p := s.Kubelet, s.Probe
	return []link{
		{k + "/pods/l-etc", "/etc", false, p, "absolute link to /etc"},
		{k + "/pods/l-root", "/", false, p, "absolute link to /"},
		{k + "/pods/l-proc", "/proc/self/root", false, p, "link to a /proc magic link"},
		{k + "/pods/l-tmp", "/tmp", false, p, "absolute link to /tmp"},
		{k + "/l-up", "..", true, "outside/victim", `relative link ".." at the top of the working dir`},
		{k + "/pods/l-upup", "../..", true, "outside/victim", `relative link "../.."`},
		{k + "/pods/l-out", s.Outside(), true, "victim", "absolute link to a directory beside the working dirs"},
		{k + "/pods/l-rel-out", "../../outside", true, "victim", "relative link to a directory beside the working dirs"},
		{k + "/pods/l-sib", s.Sibling(), true, "data", "absolute link to the <kubelet>-x sibling"},
		{k + "/pods/l-chain", "l-out", true, "victim", "relative link to a link that leads out"},
		{k + "/pods/l-dotdot-abs", k + "/../outside", true, "victim", "absolute link spelt with .. out of the working dir"},
		{s.CSI + "/l-k", "../kubelet", true, "pods", "relative link from one working dir into another (pops above its anchor)"},
	}
}

// rootLink is a symlink the suite plants inside a working directory that
// leads to a working directory itself: it stays inside, so it is followed,
// but the path text no longer shows that it names a working directory.
type rootLink struct {
	at, to string
	// kubelet tells that the link leads to the kubelet working dir, so
	// <at>/plugins and <at>/plugins_registry name the nested ones.
	kubelet bool
	what    string
}

// rootLinks are the links to the working directories themselves.
func rootLinks(s sandbox) []rootLink {
	k := s.Kubelet
	return []rootLink{
		{k + "/pods/l-wd", k, true, "absolute link to the kubelet working dir itself"},
		{k + "/pods/l-wd-rel", "..", true, `relative link ".." to the kubelet working dir itself`},
		{k + "/pods/l-wd-csi", s.CSI, false, "absolute link from one working dir to the other itself"},
		{s.CSI + "/l-wd-dot", ".", false, `relative link "." to its own working dir`},
	}
}

// badVolumeIDs are volume IDs every volume-ID field must refuse on a Linux
// host (printable, no separators, at most 256 bytes), and well-formed ones
// that name no volume (NotFound: the backend's IDs are partition GUIDs).
func badVolumeIDs() []input {
	return []input{
		ia("", "empty"),
		ia("/", "slash"),
		ia("../x", "traversal"),
		ia("a/b", "slash inside"),
		ia(`a\b`, "backslash"),
		ia(" ", "space"),
		ia(" 5ab1d0a6-3c1f-4f1e-9d59-0d5c7b8c3e21", "leading space"),
		ia("5ab1d0a6-3c1f-4f1e-9d59-0d5c7b8c3e21 ", "trailing space"),
		ia("a b", "inner space"),
		ia("\t", "tab"),
		ia("x\n", "newline"),
		ia("a\x00", "NUL"),
		ia("\x7f", "DEL"),
		ia(strings.Repeat("a", 257), "257 bytes"),
		ia(strings.Repeat("f", 300), "300 bytes"),
		ia(`\\?\Volume{5ab1d0a6-3c1f-4f1e-9d59-0d5c7b8c3e21}\`, "the Windows volume ID form"),
		ia("'; rm -rf /", "SQL/shell injection"),
		ia("$(rm -rf /)", "command substitution with a slash"),
		ia("a\u0085b", "C1 control NEL (U+0085): not printable"),
		ia("a\u00a0b", "no-break space (U+00A0): not printable"),
		ia("\u200b", "zero-width space (U+200B): not printable"),
		nf("$(id)", "command substitution"),
		nf("`id`", "backticks"),
		nf("..", "dot-dot"),
		nf(".", "dot"),
		nf("x;reboot", "command separator"),
		nf("|id", "pipe"),
		nf("&&id", "and-list"),
		nf("%n%s%x", "format verbs"),
		nf("{{.}}", "template"),
		nf("*", "glob"),
		nf("-o", "option"),
		nf("--help", "long option"),
		nf("'OR'1'='1", "SQL tautology without spaces"),
		nf(`"WQL"`, "double quotes"),
		nf("00000000-0000-4000-8000-0000000000e2", "a GUID no disk holds"),
		nf("00000000-0000-4000-8000-0000000000E3", "an upper-case GUID no disk holds"),
		nf("Volume{00000000-0000-4000-8000-0000000000e4}", "Windows GUID without the prefix"),
		nf(strings.Repeat("a", 256), "exactly 256 bytes"),
	}
}

// badDiskIDs are the string disk IDs of the older versions: only decimal
// numbers that fit in 32 bits are disk IDs.
func badDiskIDs() []input {
	return []input{
		ia("-1", "negative"),
		ia("0x1", "hexadecimal"),
		ia("1e3", "exponent"),
		ia("4294967297", "2^32+1 (upstream wrapped it to disk 1)"),
		ia("4294967296", "2^32"),
		ia("18446744073709551617", "beyond 64 bits"),
		ia("", "empty"),
		ia(" ", "space"),
		ia(" 9", "leading space"),
		ia("9 ", "trailing space"),
		ia("+9", "plus sign"),
		ia("9.0", "decimal point"),
		ia("nine", "word"),
		ia("\u0669", "Arabic-Indic digit nine"),
		ia("\uff19", "fullwidth digit nine"),
		ia("0b1", "binary prefix"),
		ia("0o7", "octal prefix"),
		ia("1_000", "digit separator"),
		ia("1,000", "thousands separator"),
		ia("9\x00", "NUL"),
		ia("9\n", "newline"),
		ia("$(id)", "command substitution"),
		ia("9;reboot", "command separator"),
		nf("4294967295", "the largest disk ID, no such disk"),
		nf("0004294967295", "leading zeros, no such disk"),
		nf("0", "disk 0 (none on Linux)"),
		nf("3000000000", "no such disk"),
	}
}

// badRemotePaths are SMB remote paths every remote_path field must refuse.
func badRemotePaths() []input {
	return []input{
		ia("", "empty"),
		ia("server", "no leading separators"),
		ia(`\\server`, "no share"),
		ia(`\\server\`, "empty share"),
		ia(`\\server\\`, "empty share, doubled separator"),
		ia(`\\\share`, "empty server"),
		ia(`//server`, "no share, slashes"),
		ia(`\\?\UNC\server\share`, `\\?\UNC device form`),
		ia(`\\?\C:\x`, `\\?\ device form`),
		ia(`\\.\pipe\x`, "named pipe"),
		ia(`\\.\PhysicalDrive0\x`, "device"),
		ia(`//server/../x`, "dot-dot as the share"),
		ia(`\\server\share\..\..\x`, "dot-dot below the share"),
		ia(`\\server\.\x`, "dot as the share"),
		ia(`\\server\share\\x`, "empty element"),
		ia("\\\\srv\\sh\x00are", "NUL"),
		ia("\\\\srv\\sh\nare", "newline"),
		ia("\\\\srv\\sh\x7fare", "DEL"),
		ia("\\\\srv\\sh\x1bare", "escape"),
		ia(`\\srv\sh:are`, "colon"),
		ia(`\\srv\sh*`, "asterisk"),
		ia(`\\srv\sh?`, "question mark"),
		ia(`\\srv\sh|x`, "pipe"),
		ia(`\\srv\sh<x>`, "angle brackets"),
		ia(`\\srv\sh"x`, "double quote"),
		ia(`\\srv\`+strings.Repeat("s", 40000), "40000 bytes"),
		ia(`C:\share`, "drive path"),
		ia(`/server/share`, "single leading slash"),
		ia(`smb://server/share`, "URL"),
		ia("\\\\srv\\sh\u0085are", "C1 control NEL (U+0085)"),
	}
}

// badUsernames are SMB user names no Windows account can have.
func badUsernames() []input {
	var out []input
	for _, c := range `"/[]:|<>+=;,?*` {
		out = append(out, ia("csi"+string(c)+"user", "contains "+string(c)))
	}
	return append(out,
		ia("csi\x00user", "NUL"),
		ia("csi\nuser", "newline"),
		ia("csi\x7f", "DEL"),
		ia(strings.Repeat("u", 257), "257 bytes"),
		ia("", "empty (anonymous mapping)"),
	)
}

// badPasswords are SMB passwords the proxy refuses.
func badPasswords() []input {
	return []input{
		ia(strings.Repeat("p", 1025), "1025 bytes"),
		ia(strings.Repeat("p", 70000), "70000 bytes"),
		ia("pass\x00word", "NUL"),
	}
}

// portal is an iSCSI portal as a request carries it; nil is a missing one.
type portal struct {
	addr string
	port uint32
}

// portalInput is a hostile portal.
type portalInput struct {
	p    *portal
	want codes.Code
	what string
}

// badPortals are iSCSI portals every target_portal field must refuse.
func badPortals() []portalInput {
	ipa := func(addr string, port uint32, what string) portalInput {
		return portalInput{&portal{addr, port}, codes.InvalidArgument, what}
	}
	return []portalInput{
		{nil, codes.InvalidArgument, "missing portal"},
		ipa("", 3260, "empty address"),
		ipa("256.1.1.1", 3260, "octet over 255"),
		ipa("1.2.3.4.5", 3260, "five octets"),
		ipa("0", 3260, "a number (inet_aton reads it as 0.0.0.0)"),
		ipa("2130706433", 3260, "a number (inet_aton reads it as 127.0.0.1)"),
		ipa("127.1", 3260, "short dotted form (inet_aton reads it as 127.0.0.1)"),
		ipa("0x7f.1", 3260, "hexadecimal dotted form (inet_aton reads it as 127.0.0.1)"),
		ipa("127.0.0.1:3260", 3260, "host:port in the address"),
		ipa("target.example:3260", 3260, "name:port in the address"),
		ipa("-oflag", 3260, "option"),
		ipa("--help", 3260, "long option"),
		ipa("a b", 3260, "space"),
		ipa(" 127.0.0.1", 3260, "leading space"),
		ipa("127.0.0.1 ", 3260, "trailing space"),
		ipa("127.0.0.1\n", 3260, "newline"),
		ipa("\x00", 3260, "NUL"),
		ipa("a..b", 3260, "empty label"),
		ipa("-a.example", 3260, "label starting with a hyphen"),
		ipa("a_b.example", 3260, "underscore"),
		ipa(strings.Repeat("a", 64)+".example", 3260, "label over 63 bytes"),
		ipa(strings.Repeat("a.", 127)+"aa", 3260, "name over 253 bytes"),
		ipa("$(id)", 3260, "command substitution"),
		ipa("127.0.0.1;reboot", 3260, "command separator"),
		ipa("[127.0.0.1", 3260, "unbalanced bracket"),
		ipa("::1]", 3260, "unbalanced bracket"),
		ipa("fe80::1%eth0", 3260, "IPv6 zone"),
		ipa("127.0.0.1", 65536, "port 65536"),
		ipa("127.0.0.1", 70000, "port 70000"),
		ipa("127.0.0.1", 4294967295, "port 2^32-1"),
	}
}

// badIQNs are iSCSI names every iqn field must refuse (RFC 3720 3.2.6:
// iqn.yyyy-mm.reverse-domain[:id], eui.<16 hex>, naa.<16|32 hex>; RFC
// 3722 allows only letters, digits, '-', '.' and ':' of ASCII).
func badIQNs() []input {
	const good = "iqn.2003-01.org.example"
	return []input{
		ia("", "empty"),
		ia("iqn.bad", "no date"),
		ia("iqn", "prefix only"),
		ia("iqn.2003-01", "no authority"),
		ia("iqn.2003-01.", "empty authority"),
		ia(good+":", "empty id"),
		ia(good+":a b", "space"),
		ia(" "+good+":x", "leading space"),
		ia(good+":x ", "trailing space"),
		ia("-oflag", "option"),
		ia("--login", "long option"),
		ia(good+":x\n", "newline"),
		ia(good+":\x00", "NUL"),
		ia(good+":\x7f", "DEL"),
		ia("iqn.2003-01.Org.example:x", "upper-case authority"),
		ia("iqn.2003-1.org.example:x", "one-digit month"),
		ia(good+":"+strings.Repeat("a", 200), "over 223 bytes"),
		ia("eui.123", "short EUI"),
		ia("eui.0123456789ABCDEG", "EUI with a non-hex digit"),
		ia("naa.123", "short NAA"),
		ia(good+":$(id)", "command substitution in the id"),
		ia(good+":`id`", "backticks in the id"),
		ia(good+":x;reboot", "command separator in the id"),
		ia(good+":../../etc", "traversal in the id"),
		ia(good+":a/b", "slash in the id"),
		ia(good+":'x'", "quotes in the id"),
		ia("iqn.2003-01.org.example:x!", "exclamation mark in the id"),
		ia(good+":a\u00a0b", "no-break space in the id"),
		ia(good+":a\u0085b", "C1 control in the id"),
	}
}

// chapCase is a ConnectTarget authentication that must be refused.
type chapCase struct {
	auth         int32
	user, secret string
	what         string
}

// badChap are ConnectTarget authentications the proxy refuses
// (InvalidArgument): CHAP secrets are 12 to 16 bytes (RFC 3720), user names
// 1 to 223, neither with control characters, and NONE carries neither.
func badChap() []chapCase {
	const user, secret = "initiator", "secret-123456"
	return []chapCase{
		{0, user, "", "user name with auth NONE"},
		{0, "", secret, "secret with auth NONE"},
		{1, user, "short-11byt", "11-byte secret"},
		{1, user, "seventeen-bytes!!", "17-byte secret"},
		{1, user, "", "empty secret"},
		{1, "", secret, "empty user"},
		{1, strings.Repeat("u", 224), secret, "224-byte user"},
		{1, user, "secret\n123456", "newline in the secret"},
		{1, user, "secret\x00123456", "NUL in the secret"},
		{1, "init\niator", secret, "newline in the user"},
		{1, user, "secret\u0085123456", "C1 control in the secret"},
		{2, user, "short", "mutual CHAP with a short secret"},
		{3, user, secret, "auth type 3"},
		{-1, user, secret, "auth type -1"},
		{2147483647, user, secret, "auth type 2^31-1"},
	}
}

// allowedService is the daemon's only --allowed-service.
const allowedService = "csi-hostile-allowed"

// badServiceNames are service names Start/Stop must refuse: malformed
// (InvalidArgument) or not on the allow-list (PermissionDenied). getWant is
// what GetService, which may read any service, must answer
// (InvalidArgument from the name rules or systemd's unit-name rules).
type serviceInput struct {
	input
	getWant codes.Code
}

func badServiceNames() []serviceInput {
	both := func(in input) serviceInput { return serviceInput{in, in.want} }
	notAllowed := func(v, what string) serviceInput {
		return serviceInput{pd(v, what), codes.InvalidArgument}
	}
	return []serviceInput{
		both(ia("", "empty")),
		both(ia("../x", "traversal")),
		both(ia("a/b", "slash")),
		both(ia(`a\b`, "backslash")),
		both(ia(strings.Repeat("s", 257), "257 bytes")),
		both(ia(strings.Repeat("s", 300), "300 bytes")),
		both(ia("ssh\x00d", "NUL")),
		both(ia("sshd\n", "newline")),
		both(ia("\x7f", "DEL")),
		both(ia("ssh\u0085d", "C1 control NEL (U+0085)")),
		both(ia(allowedService+"\x00", "the allowed name with a NUL")),
		notAllowed("ssh d", "space"),
		notAllowed("$(reboot)", "command substitution"),
		notAllowed("`id`", "backticks"),
		notAllowed("sshd;reboot", "command separator"),
		notAllowed("getty@", "bare template"),
		notAllowed("@x", "nothing before @"),
		notAllowed("a@b@c", "two @"),
		notAllowed(strings.Repeat("s", 250), "unit name over 255 bytes with .service"),
		notAllowed(allowedService+" ", "the allowed name with a trailing space"),
		notAllowed("*", "glob"),
	}
}

// notAllowedServices are well-formed service names that are not on the
// allow-list: StartService and StopService must answer PermissionDenied
// without asking systemd (GetService is not tried: it may read any
// service, and this host has no systemd to ask).
var notAllowedServices = []string{
	"sshd", "SSHD", "Sshd", "ssh.service", "reboot.target", "poweroff.target", "systemd-journald",
	"dbus", "foo.service", "foo.target", allowedService + ".service", allowedService + ".target",
	allowedService + "x", "x" + allowedService, "csi-hostile", "kubelet", "containerd", "iscsid",
	"getty@tty1", "emergency",
}

// windowsBadPaths are hostile paths for a Windows host (the Windows backend
// and the simulated host). The Linux daemon does not see them; they seed
// the Windows path rules' fuzz corpus, with the expected code for a policy
// of C:\var\lib\kubelet and d:\csi.
func windowsBadPaths() []input {
	const k = `C:\var\lib\kubelet`
	return []input{
		ia("", "empty"),
		ia(`var\lib\kubelet`, "relative"),
		ia(`C:var\lib\kubelet`, "drive-relative"),
		pd(`\Windows\System32`, "rooted without a drive, outside the working dirs"),
		ia(`C:`, "drive only"),
		ia(`\\server\share\x`, "UNC"),
		ia(`//server/share/x`, "UNC with slashes"),
		ia(`\\?\C:\var\lib\kubelet`, `\\?\ device path`),
		ia(`\\.\PhysicalDrive0`, `\\.\ device path`),
		ia(`\\?\UNC\server\share`, `\\?\UNC`),
		ia(`\??\C:\Windows`, "NT object path"),
		ia(`\\?\Volume{5ab1d0a6-3c1f-4f1e-9d59-0d5c7b8c3e21}\x`, "volume GUID path"),
		ia(k+`\..\..\..\Windows`, "traversal"),
		ia(k+`/../../../Windows`, "traversal with slashes"),
		ia(k+`\pods\..`, "trailing dot-dot"),
		ia(k+`\pods\bad|name`, "pipe"),
		ia(k+`\pods\a<b`, "angle bracket"),
		ia(k+`\pods\a"b`, "double quote"),
		ia(k+`\pods\a?b`, "question mark"),
		ia(k+`\pods\a*b`, "asterisk"),
		ia(k+`\pods\a:stream`, "alternate data stream"),
		ia(k+`\pods\x.`, "trailing dot (Windows drops it)"),
		ia(k+`\pods\x `, "trailing space (Windows drops it)"),
		ia(k+`\pods\...`, "three dots"),
		ia(k+`\pods\nul`, "NUL device"),
		ia(k+`\pods\CON.txt`, "CON device with an extension"),
		ia(k+`\pods\com1`, "COM1 device"),
		ia(k+`\pods\LPT9.log`, "LPT9 device"),
		ia(k+`\pods\COM¹`, "COM with a superscript digit"),
		ia(k+`\pods\CONIN$`, "console input device"),
		ia(k+`\pods\aux .txt`, "AUX with a space before the extension"),
		ia(k+"\\pods\\nul\x00byte", "NUL byte"),
		ia(k+"\\pods\\a\nb", "newline"),
		ia(k+"\\pods\\a\u0085b", "C1 control NEL (U+0085)"),
		ia(k+`\`+strings.Repeat("a", 33000), "over 32767 bytes"),
		ia(`1:\x`, "digit as drive"),
		ia(`C::\x`, "double colon"),
		pd(`C:\Windows\System32`, "system directory"),
		pd(`C:\`, "drive root"),
		pd(`C:\var\lib\kubelet-x\pods\p`, "sibling prefix"),
		pd(`C:\var\lib\kubelet-x`, "sibling prefix itself"),
		pd(`D:\var\lib\kubelet\pods`, "another drive"),
		pd(`C:\var\lib\kubeletx`, "longer name"),
		pd(`C:\var\lib\kubele`, "prefix of the working dir"),
		pd(`C:\var\lib\`+"\u212aubelet", "Kelvin sign K (U+212A), another name on NTFS"),
		pd(`d:\csi-x`, "sibling of the other working dir"),
		pd(`C:\ProgramData\csi`, "program data"),
	}
}

// windowsBadVolumeIDs are hostile volume IDs for a Windows host, where the
// form is \\?\Volume{GUID}\.
func windowsBadVolumeIDs() []input {
	const g = "5ab1d0a6-3c1f-4f1e-9d59-0d5c7b8c3e21"
	return []input{
		ia(g, "bare GUID"),
		ia(`\\?\Volume{`+g+`}`, "no trailing backslash"),
		ia(`\\?\Volume{`+g+`}\\`, "two trailing backslashes"),
		ia(`\\.\Volume{`+g+`}\`, `\\.\ prefix`),
		ia(`\\?\Volume{`+g+`}\..\x`, "path below the volume"),
		ia(`\\?\Volume{5ab1d0a6-3c1f-4f1e-9d59-0d5c7b8c3e2g}\`, "non-hex digit"),
		ia(`\\?\Volume{5ab1d0a63c1f-4f1e-9d59-0d5c7b8c3e21-}\`, "dash misplaced"),
		ia(`\\?\Volume{`+g+`}\`+"\n", "trailing newline"),
		ia(`\\?\Volume{`+g+"}\\\x00", "trailing NUL"),
		ia(`\\?\Volume{{`+g+`}}\`, "doubled braces"),
		ia(`\\?\Volume{`+g+`}\'; DROP TABLE x; --`, "WQL injection"),
		ia(`\\?\Volume{'+(SELECT 1)+'}\`, "WQL injection in the braces"),
		ia(`C:\`, "drive root"),
		ia(`\\?\GLOBALROOT\Device\HarddiskVolume1\`, "NT device path"),
	}
}
