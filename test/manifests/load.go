// Package manifests validates csi-node-proxy's deployment files offline,
// without a cluster, the way the API server and the daemon would read them:
//
//  1. every YAML document is decoded strictly into its typed k8s.io/api
//     object (the API server's strict field validation: unknown, duplicate
//     and wrongly cased fields and wrong types are errors);
//  2. the same document, untyped, is checked against the structured schema
//     client-go ships for server-side apply, generated from Kubernetes'
//     OpenAPI (field names, types, list keys);
//  3. semantic rules the schema cannot express: the API server's own
//     (selectors, volume references, hostPath types, HostProcess rules) and
//     this project's (every csi-node-proxy flag exists and parses in the real
//     daemon, pipes and sockets match what the daemon serves, the admission
//     policy admits the pods that mount them);
//  4. systemd units with systemd-analyze verify and the project's hardening
//     rules, and command lines in READMEs against the daemon's flags.
//
// It is its own module so the Kubernetes libraries never enter the daemon's
// dependencies. The tests in this directory run it on deploy/ and examples/.
package manifests

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"k8s.io/client-go/applyconfigurations"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/yaml"
)

// Document is one YAML document of a manifest file.
type Document struct {
	// File is the file's path as given to Load; Line the line the document
	// starts on.
	File string
	Line int
	// Raw is the document's YAML.
	Raw []byte
	// GVK is its apiVersion and kind; Object the typed object the strict
	// decoder produced (nil if decoding failed).
	GVK    schema.GroupVersionKind
	Object runtime.Object
}

// String names the document for error messages: file:line Kind ns/name.
func (d *Document) String() string {
	s := fmt.Sprintf("%s:%d", d.File, d.Line)
	if d.GVK.Kind != "" {
		s += " " + d.GVK.Kind
	}
	if m, ok := d.Object.(interface {
		GetNamespace() string
		GetName() string
	}); ok {
		if m.GetNamespace() != "" {
			s += " " + m.GetNamespace() + "/" + m.GetName()
		} else {
			s += " " + m.GetName()
		}
	}
	return s
}

// Schema decodes and validates documents against Kubernetes' built-in types.
type Schema struct {
	decoder   runtime.Decoder
	converter managedfields.TypeConverter
}

// NewSchema builds the strict decoder for every built-in kind client-go
// knows, plus the Prometheus Operator's monitoring.coreos.com/v1 (the
// PodMonitor of deploy/components/podmonitor and the Helm chart), and the
// structured-merge-diff type converter from client-go's embedded,
// OpenAPI-derived schema, which has built-in kinds only.
func NewSchema() *Schema {
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		panic(err) // registering client-go's own types cannot fail
	}
	if err := monitoringv1.AddToScheme(scheme); err != nil {
		panic(err)
	}
	codecs := serializer.NewCodecFactory(scheme, serializer.EnableStrict)
	return &Schema{
		decoder:   codecs.UniversalDeserializer(),
		converter: applyconfigurations.NewTypeConverter(clientgoscheme.Scheme),
	}
}

// typedOnly are the API groups that have Go types (strict decoding) but no
// structured schema in client-go; their objects are checked by step 1 and
// by the semantic checks only.
var typedOnly = map[string]bool{monitoringv1.SchemeGroupVersion.Group: true}

// separator is a YAML document separator line.
var separator = regexp.MustCompile(`^---(\s.*)?$`)

// SplitDocuments splits a YAML stream into documents, each with the line it
// starts on, leaving out documents with nothing but comments and blanks.
func SplitDocuments(data []byte) (docs [][]byte, lines []int) {
	start := 1
	var cur []string
	flush := func() {
		raw := strings.Join(cur, "\n") + "\n"
		var v any
		if err := yaml.Unmarshal([]byte(raw), &v); err != nil || v != nil {
			docs, lines = append(docs, []byte(raw)), append(lines, start)
		}
	}
	for i, line := range strings.Split(string(data), "\n") {
		if separator.MatchString(line) {
			flush()
			cur, start = nil, i+2
			continue
		}
		cur = append(cur, line)
	}
	flush()
	return docs, lines
}

// LoadFile reads a manifest file and validates each of its documents
// against the schemas (steps 1 and 2 of the package comment). It returns
// every document, decoded or not, and every error, each naming its
// document.
func (s *Schema) LoadFile(path string) ([]*Document, []error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, []error{err}
	}
	return s.LoadBytes(path, data)
}

// LoadBytes is LoadFile for a YAML stream that is not a file, such as the
// output of kustomize or Helm; name stands for the file in messages.
func (s *Schema) LoadBytes(path string, data []byte) ([]*Document, []error) {
	var docs []*Document
	var errs []error
	raws, lines := SplitDocuments(data)
	for i, raw := range raws {
		d := &Document{File: path, Line: lines[i], Raw: raw}
		docs = append(docs, d)
		for _, err := range s.validate(d) {
			errs = append(errs, fmt.Errorf("%s: %w", d, err))
		}
	}
	if len(docs) == 0 {
		errs = append(errs, fmt.Errorf("%s: no Kubernetes object in the file", path))
	}
	return docs, errs
}

// validate decodes d strictly into its typed object and checks it against
// the structured schema. Both run even if the first fails: each names
// problems the other words differently.
func (s *Schema) validate(d *Document) []error {
	var errs []error
	obj, gvk, err := s.decoder.Decode(d.Raw, nil, nil)
	if gvk != nil {
		d.GVK = *gvk
	}
	switch {
	case err != nil && runtime.IsStrictDecodingError(err):
		// The object decoded, with fields the type does not have.
		d.Object = obj
		errs = append(errs, fmt.Errorf("strict decoding into the typed object: %w", err))
	case err != nil:
		errs = append(errs, fmt.Errorf("decoding into the typed object: %w", err))
	default:
		d.Object = obj
	}

	j, err := yaml.YAMLToJSONStrict(d.Raw)
	if err != nil {
		return append(errs, fmt.Errorf("YAML: %w", err))
	}
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON(j); err != nil {
		return append(errs, fmt.Errorf("reading the object: %w", err))
	}
	if typedOnly[u.GroupVersionKind().Group] {
		return errs
	}
	if _, err := s.converter.ObjectToTyped(u); err != nil {
		errs = append(errs, fmt.Errorf("schema (%s): %w", u.GroupVersionKind(), err))
	}
	return errs
}

// Files lists the files under the roots (relative to base) that the
// validator reads as they are: manifests (*.yaml, *.yml), systemd units
// (*.service) and READMEs (README.md), sorted. Kustomization files, the
// directories of kustomize components and Helm charts hold no manifest that
// applies on its own: Kustomizations and Charts list those, and the tests
// render them.
func Files(base string, roots ...string) (manifests, units, readmes []string, err error) {
	for _, root := range roots {
		err = filepath.WalkDir(filepath.Join(base, root), func(p string, e os.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if e.IsDir() {
				if isChart(p) || isComponent(p) {
					return filepath.SkipDir
				}
				return nil
			}
			// Policy files are not Kubernetes objects: TestShippedPolicies
			// checks them with the daemon's parser.
			if isKustomizationFile(e.Name()) || e.Name() == "policy.yaml" {
				return nil
			}
			switch {
			case strings.HasSuffix(p, ".yaml"), strings.HasSuffix(p, ".yml"):
				manifests = append(manifests, p)
			case strings.HasSuffix(p, ".service"):
				units = append(units, p)
			case filepath.Base(p) == "README.md":
				readmes = append(readmes, p)
			}
			return nil
		})
		if err != nil {
			return nil, nil, nil, err
		}
	}
	return manifests, units, readmes, nil
}
