package main

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"sigs.k8s.io/yaml"
)

// view is what a command prints: the JSON document for -o json and the
// table (or, for a change, the sentence) for people. Both come from the
// same values, so the formats never disagree.
type view struct {
	// json is marshalled as the one JSON document.
	json any
	// header and rows are the table; rows are sorted by the command.
	header []string
	rows   [][]string
	// message is printed instead of a table: what a change did.
	message string
	// wideHeader and wideRows are the columns -o wide adds after the
	// table's, one wideRows entry per row; a command without them prints
	// its table for -o wide.
	wideHeader []string
	wideRows   [][]string
}

// write prints v in the format -o asks for; noHeaders leaves out a
// table's header line.
func (v *view) write(w io.Writer, format string, noHeaders bool) error {
	if tmpl, ok := strings.CutPrefix(format, jsonpathPrefix); ok {
		nodes, err := parseJSONPath(strings.Trim(tmpl, "'"))
		if err != nil {
			return err // checked with the command line already
		}
		return execJSONPath(w, nodes, v.json)
	}
	switch format {
	case formatJSON:
		b, err := json.MarshalIndent(v.json, "", "  ")
		if err != nil {
			return fmt.Errorf("encode JSON output: %w", err)
		}
		_, err = fmt.Fprintf(w, "%s\n", b)
		return err
	case formatYAML:
		// The JSON document, as YAML: the same field names (the json
		// tags), so jq and yq filters read alike.
		b, err := yaml.Marshal(v.json)
		if err != nil {
			return fmt.Errorf("encode YAML output: %w", err)
		}
		_, err = w.Write(b)
		return err
	}
	if v.message != "" {
		_, err := fmt.Fprintln(w, v.message)
		return err
	}
	wide := format == formatWide && len(v.wideHeader) > 0
	tw := newTabWriter(w)
	if !noHeaders {
		header := v.header
		if wide {
			header = append(slices.Clip(header), v.wideHeader...)
		}
		say(tw, "%s\n", strings.Join(header, "\t"))
	}
	for i, r := range v.rows {
		if wide && i < len(v.wideRows) {
			r = append(slices.Clip(r), v.wideRows[i]...)
		}
		say(tw, "%s\n", strings.Join(r, "\t"))
	}
	return tw.Flush()
}

// humanSize renders a byte count in binary units with up to one decimal
// ("1 GiB", "1.5 GiB", "512 MiB", "900 B"); tables show it next to the
// exact number of bytes.
func humanSize(n int64) string {
	units := []string{"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"}
	if n < 1024 && n > -1024 {
		return strconv.FormatInt(n, 10) + " B"
	}
	f := float64(n)
	i := 0
	for (f >= 1024 || f <= -1024) && i < len(units)-1 {
		f /= 1024
		i++
	}
	s := strconv.FormatFloat(f, 'f', 1, 64)
	s = strings.TrimSuffix(s, ".0")
	return s + " " + units[i]
}

// orDash renders an empty table cell as "-", so columns stay aligned and
// empty is visibly empty.
func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// yesNo renders a boolean for a table.
func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// say writes to the terminal-facing streams (help, prompts, the error
// line, table rows into a tabwriter). A failed write there has no better
// place to be reported, and a tabwriter reports its writer's errors at
// Flush, which is checked.
func say(w io.Writer, format string, args ...any) {
	_, _ = fmt.Fprintf(w, format, args...)
}
