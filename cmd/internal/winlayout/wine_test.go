package winlayout

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// figuresUnderWine links the generated program (figures.c with its main,
// and guids.c for the GUIDs' definitions, both already written to dir by
// compileFigures) into a Windows executable, runs it under Wine and returns
// each figure's value in the form compileFigures gives.
func figuresUnderWine(dir string, figs []figure) ([]string, error) {
	exe := filepath.Join(dir, "figures.exe")
	testdata, err := filepath.Abs("testdata")
	if err != nil {
		return nil, err
	}
	build := exec.Command(mingwCC, "-std=gnu11", "-O0", "-DORACLE_MAIN", "-D__USE_MINGW_ANSI_STDIO=1", "-I", testdata,
		"-o", exe, filepath.Join(dir, "figures.c"), filepath.Join(dir, "guids.c"))
	if out, err := build.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("linking figures.exe: %v\n%s", err, out)
	}
	prefix := os.Getenv("WINEPREFIX")
	if prefix == "" {
		prefix = filepath.Join(os.TempDir(), "wineprefix-go") // hack/wine's
	}
	run := exec.Command("wine", exe)
	run.Env = append(os.Environ(), "WINEPREFIX="+prefix, "WINEDEBUG=-all", "WINEARCH=win64", "DISPLAY=")
	var stdout, stderr bytes.Buffer
	run.Stdout, run.Stderr = &stdout, &stderr
	run.WaitDelay = 10 * time.Second // Wine's helper processes may hold the pipes
	if err := run.Run(); err != nil {
		return nil, fmt.Errorf("wine figures.exe: %v\n%s", err, stderr.String())
	}
	out := make([]string, len(figs))
	sc := bufio.NewScanner(&stdout)
	for sc.Scan() {
		fields := strings.Fields(strings.TrimSuffix(sc.Text(), "\r"))
		if len(fields) < 2 {
			continue
		}
		i, err := strconv.Atoi(fields[0])
		if err != nil || i < 0 || i >= len(figs) {
			return nil, fmt.Errorf("figures.exe printed %q", sc.Text())
		}
		vals := fields[1:]
		switch kind, _ := cKind(figs[i].C); {
		case vals[0] == "guid":
			b := make([]byte, 0, 16)
			for _, v := range vals[1:] {
				n, err := strconv.ParseUint(v, 10, 8)
				if err != nil {
					return nil, fmt.Errorf("figures.exe printed %q", sc.Text())
				}
				b = append(b, byte(n))
			}
			out[i] = formatGUID(b)
		case kind == "params":
			out[i] = vals[0] + ":" + strings.Join(vals[1:], ",")
		default:
			out[i] = vals[0]
		}
	}
	return out, sc.Err()
}
