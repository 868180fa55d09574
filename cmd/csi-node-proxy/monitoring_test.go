//go:build unix

package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"sigs.k8s.io/yaml"
)

// The alert rules and the dashboard under deploy/components/monitoring
// name metrics in PromQL; a renamed or removed series would leave an alert
// that never fires and a panel that stays empty, silently. The daemon
// test that scrapes a running daemon (TestDaemonMetrics) hands its scrape
// to checkMonitoring, which holds every name in them to what was scraped.

// monitoringDir is deploy/components/monitoring, from this package.
var monitoringDir = filepath.Join("..", "..", "deploy", "components", "monitoring")

// monitoringExprs returns every PromQL expression of the alert rules and
// the dashboard (its panels' targets and its template queries), each with
// where it came from.
func monitoringExprs(t *testing.T) map[string]string {
	t.Helper()
	out := map[string]string{}
	b, err := os.ReadFile(filepath.Join(monitoringDir, "prometheusrule.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var rule struct {
		Spec struct {
			Groups []struct {
				Rules []struct {
					Alert string `json:"alert"`
					Expr  string `json:"expr"`
				} `json:"rules"`
			} `json:"groups"`
		} `json:"spec"`
	}
	if err := yaml.Unmarshal(b, &rule); err != nil {
		t.Fatalf("prometheusrule.yaml: %v", err)
	}
	for _, g := range rule.Spec.Groups {
		for _, r := range g.Rules {
			out["alert "+r.Alert] = r.Expr
		}
	}
	b, err = os.ReadFile(filepath.Join(monitoringDir, "dashboard.json"))
	if err != nil {
		t.Fatal(err)
	}
	var dash struct {
		Panels []struct {
			Title   string `json:"title"`
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
		Templating struct {
			List []struct {
				Name  string `json:"name"`
				Type  string `json:"type"`
				Query string `json:"query"`
			} `json:"list"`
		} `json:"templating"`
	}
	if err := json.Unmarshal(b, &dash); err != nil {
		t.Fatalf("dashboard.json: %v", err)
	}
	for _, p := range dash.Panels {
		for i, tg := range p.Targets {
			out["panel "+p.Title+" #"+string(rune('A'+i))] = tg.Expr
		}
	}
	for _, v := range dash.Templating.List {
		if v.Type == "query" {
			// label_values(METRIC{...}, label): the metric is what matters.
			q := strings.TrimPrefix(v.Query, "label_values(")
			if i := strings.LastIndexByte(q, ','); i >= 0 {
				q = q[:i]
			}
			out["variable "+v.Name] = q
		}
	}
	if len(out) < 10 {
		t.Fatalf("only %d expressions found: the files' shape changed", len(out))
	}
	return out
}

// promqlSkip removes what holds no metric name: strings, label matchers,
// range and offset brackets, and grouping clauses' label lists.
var (
	promqlStrings  = regexp.MustCompile(`"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'`)
	promqlMatchers = regexp.MustCompile(`\{[^{}]*\}`)
	promqlRanges   = regexp.MustCompile(`\[[^\[\]]*\]`)
	promqlGrouping = regexp.MustCompile(`\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^()]*\)`)
	promqlWord     = regexp.MustCompile(`[A-Za-z_:][A-Za-z0-9_:]*(\s*\()?`)
	promqlDuration = regexp.MustCompile(`\b\d+(ms|s|m|h|d|w|y)\b`)
	promqlNumber   = regexp.MustCompile(`\b\d+(\.\d+)?(e[+-]?\d+)?\b`)
	promqlKeywords = []string{"and", "or", "unless", "bool", "offset", "by", "without", "on", "ignoring", "group_left", "group_right", "inf", "nan"}
)

// promqlMetricNames returns the metric names an expression selects: the
// identifiers left once strings, matchers, ranges and grouping labels are
// gone that are neither a function call nor a keyword. A small tokenizer,
// not a PromQL parser: enough for the expressions this repository writes
// (Grafana's $variables and $__rate_interval sit inside matchers and
// ranges, which are removed first).
func promqlMetricNames(expr string) []string {
	s := promqlStrings.ReplaceAllString(expr, " ")
	s = promqlMatchers.ReplaceAllString(s, " ")
	s = promqlRanges.ReplaceAllString(s, " ")
	s = promqlGrouping.ReplaceAllString(s, " ")
	s = promqlDuration.ReplaceAllString(s, " ")
	s = promqlNumber.ReplaceAllString(s, " ")
	var names []string
	for _, m := range promqlWord.FindAllString(s, -1) {
		if strings.HasSuffix(m, "(") || slices.Contains(promqlKeywords, strings.ToLower(m)) {
			continue
		}
		names = append(names, m)
	}
	slices.Sort(names)
	return slices.Compact(names)
}

// TestPromQLMetricNames: the tokenizer finds the metric names and only
// them, so checkMonitoring can fail.
func TestPromQLMetricNames(t *testing.T) {
	for expr, want := range map[string][]string{
		`sum by (namespace, pod) (increase(a_total{reason="no_rule", x=~"by (y)"}[15m])) > 0 unless on (namespace, pod) b_total > 0`: {"a_total", "b_total"},
		`histogram_quantile(0.99, sum by (le) (rate(h_bucket{pod=~"$pod"}[$__rate_interval])))`:                                      {"h_bucket"},
		`min by (pod) (csi_node_proxy_audit_log_healthy) == 0`:                                                                       {"csi_node_proxy_audit_log_healthy"},
		`count by (version, commit) (x_info{namespace="$namespace"}) offset 5m`:                                                      {"x_info"},
		`rate(c_count[10m]) - rate(c_bucket{le="90"}[10m]) > 1e3`:                                                                    {"c_bucket", "c_count"},
	} {
		if got := promqlMetricNames(expr); !slices.Equal(got, want) {
			t.Errorf("promqlMetricNames(%s) = %q, want %q", expr, got, want)
		}
	}
}

// checkMonitoring holds every metric name of the alert rules and the
// dashboard to the families a running daemon exported (fams, from one
// scrape): a histogram's _bucket, _count and _sum count as its family.
func checkMonitoring(t *testing.T, fams map[string]*dto.MetricFamily) {
	t.Helper()
	exported := func(name string) bool {
		if _, ok := fams[name]; ok {
			return true
		}
		for _, suffix := range []string{"_bucket", "_count", "_sum"} {
			if base, ok := strings.CutSuffix(name, suffix); ok {
				if f, ok := fams[base]; ok && f.GetType() == dto.MetricType_HISTOGRAM {
					return true
				}
			}
		}
		return false
	}
	checked := 0
	for where, expr := range monitoringExprs(t) {
		names := promqlMetricNames(expr)
		if len(names) == 0 {
			t.Errorf("%s: no metric name in %q", where, expr)
		}
		for _, n := range names {
			checked++
			if !exported(n) {
				t.Errorf("%s uses %s, which the daemon does not export (expression %q)", where, n, expr)
			}
		}
	}
	t.Logf("monitoring: %d metric names in the alert rules and the dashboard, all exported", checked)
}
