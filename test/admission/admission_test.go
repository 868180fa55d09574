// Package admission tests the ValidatingAdmissionPolicy in
// deploy/admission against realistic pod specs, evaluating its CEL the way
// the API server does: variables in order, then each validation, with the
// Kubernetes CEL string extensions and optional field access.
//
// It is its own module so cel-go never enters the daemon's dependencies.
package admission

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"cel.dev/cel-go/cel"
	"cel.dev/cel-go/common/types"
	"cel.dev/cel-go/common/types/ref"
	"cel.dev/cel-go/ext"
	"sigs.k8s.io/yaml"
)

const policyFile = "../../deploy/admission/csi-node-proxy-endpoints.yaml"

type policy struct {
	Kind string `json:"kind"`
	Spec struct {
		FailurePolicy string `json:"failurePolicy"`
		Variables     []struct {
			Name       string `json:"name"`
			Expression string `json:"expression"`
		} `json:"variables"`
		Validations []struct {
			Expression        string `json:"expression"`
			MessageExpression string `json:"messageExpression"`
			Reason            string `json:"reason"`
		} `json:"validations"`
	} `json:"spec"`
	Data map[string]string `json:"data"`
	// Binding fields.
	PolicyName string `json:"-"`
}

type document map[string]any

// load returns the policy, the binding and the ConfigMap of the manifest.
func load(t *testing.T) (pol policy, binding, params document) {
	t.Helper()
	raw, err := os.ReadFile(policyFile)
	if err != nil {
		t.Fatal(err)
	}
	for _, doc := range strings.Split(string(raw), "\n---\n") {
		var d document
		if err := yaml.Unmarshal([]byte(doc), &d); err != nil {
			t.Fatalf("parse %s: %v", policyFile, err)
		}
		switch d["kind"] {
		case "ValidatingAdmissionPolicy":
			if err := yaml.Unmarshal([]byte(doc), &pol); err != nil {
				t.Fatal(err)
			}
		case "ValidatingAdmissionPolicyBinding":
			binding = d
		case "ConfigMap":
			params = d
		}
	}
	if pol.Kind == "" || binding == nil || params == nil {
		t.Fatalf("%s must hold a policy, a binding and a ConfigMap", policyFile)
	}
	return pol, binding, params
}

// evaluator compiles the policy once.
type evaluator struct {
	vars        []compiled
	validations []compiled
	messages    []compiled
}

type compiled struct {
	name string
	prg  cel.Program
}

func newEvaluator(t *testing.T, pol policy) *evaluator {
	t.Helper()
	env, err := cel.NewEnv(
		cel.Variable("object", cel.DynType),
		cel.Variable("oldObject", cel.DynType),
		cel.Variable("request", cel.DynType),
		cel.Variable("params", cel.DynType),
		cel.Variable("namespaceObject", cel.DynType),
		cel.Variable("variables", cel.MapType(cel.StringType, cel.DynType)),
		ext.Strings(),
		cel.OptionalTypes(),
	)
	if err != nil {
		t.Fatal(err)
	}
	compile := func(what, expr string) cel.Program {
		ast, iss := env.Compile(expr)
		if iss.Err() != nil {
			t.Fatalf("%s does not compile: %v\n%s", what, iss.Err(), expr)
		}
		prg, err := env.Program(ast)
		if err != nil {
			t.Fatal(err)
		}
		return prg
	}
	e := &evaluator{}
	for _, v := range pol.Spec.Variables {
		e.vars = append(e.vars, compiled{v.Name, compile("variable "+v.Name, v.Expression)})
	}
	for i, v := range pol.Spec.Validations {
		e.validations = append(e.validations, compiled{fmt.Sprint(i), compile("validation", v.Expression)})
		e.messages = append(e.messages, compiled{fmt.Sprint(i), compile("messageExpression", v.MessageExpression)})
	}
	return e
}

// admit returns whether the pod is admitted and the denial message. An
// evaluation error denies, as failurePolicy Fail does.
func (e *evaluator) admit(pod document, namespace string, params any) (bool, string, error) {
	vars := map[string]any{}
	act := map[string]any{
		"object":          pod,
		"oldObject":       nil,
		"request":         map[string]any{"namespace": namespace, "operation": "CREATE"},
		"params":          params,
		"namespaceObject": map[string]any{"metadata": map[string]any{"name": namespace}},
		"variables":       vars,
	}
	for _, v := range e.vars {
		out, _, err := v.prg.Eval(act)
		if err != nil {
			return false, "", fmt.Errorf("variable %s: %w", v.name, err)
		}
		vars[v.name] = native(out)
	}
	for i, v := range e.validations {
		out, _, err := v.prg.Eval(act)
		if err != nil {
			return false, "", fmt.Errorf("validation %s: %w", v.name, err)
		}
		if out != types.True {
			msg, _, err := e.messages[i].prg.Eval(act)
			if err != nil {
				return false, "", fmt.Errorf("message %s: %w", v.name, err)
			}
			return false, fmt.Sprint(msg.Value()), nil
		}
	}
	return true, "", nil
}

// native turns a CEL value into plain Go values so later expressions see it
// through the dyn-typed variables map.
func native(v ref.Val) any {
	switch v.Type() {
	case types.ListType:
		l := v.(interface {
			Size() ref.Val
			Get(ref.Val) ref.Val
		})
		n := l.Size().(types.Int)
		out := make([]any, 0, int(n))
		for i := types.Int(0); i < n; i++ {
			out = append(out, native(l.Get(i)))
		}
		return out
	}
	return v.Value()
}

type podCase struct {
	Name      string   `json:"name"`
	Namespace string   `json:"namespace"`
	Allow     bool     `json:"allow"`
	Pod       document `json:"pod"`
}

func TestPolicyAgainstRealisticPods(t *testing.T) {
	pol, _, params := load(t)
	e := newEvaluator(t, pol)
	raw, err := os.ReadFile("testdata/pods.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var cases []podCase
	if err := yaml.Unmarshal(raw, &cases); err != nil {
		t.Fatal(err)
	}
	if len(cases) < 10 {
		t.Fatalf("only %d cases", len(cases))
	}
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			ok, msg, err := e.admit(c.Pod, c.Namespace, map[string]any(params))
			if err != nil {
				t.Fatalf("evaluation failed: %v", err)
			}
			if ok != c.Allow {
				t.Fatalf("admitted = %v, want %v (message %q)", ok, c.Allow, msg)
			}
			if !ok && !strings.Contains(msg, "is not in allowedServiceAccounts") {
				t.Errorf("denial message does not say why: %q", msg)
			}
		})
	}
}

// Without the ConfigMap, params is null: evaluation fails and, with
// failurePolicy Fail, the pod is denied. The binding also says Deny when the
// parameter is missing. Never open.
func TestMissingParamsNeverOpens(t *testing.T) {
	pol, binding, _ := load(t)
	if pol.Spec.FailurePolicy != "Fail" {
		t.Fatalf("failurePolicy = %q, want Fail", pol.Spec.FailurePolicy)
	}
	ref, _ := binding["spec"].(map[string]any)["paramRef"].(map[string]any)
	if ref["parameterNotFoundAction"] != "Deny" {
		t.Fatalf("binding paramRef.parameterNotFoundAction = %v, want Deny", ref["parameterNotFoundAction"])
	}
	e := newEvaluator(t, pol)
	pod := document{"metadata": map[string]any{"name": "p"}, "spec": map[string]any{
		"volumes": []any{map[string]any{"name": "p", "hostPath": map[string]any{"path": `\\.\pipe\csi-proxy-disk-v1`}}},
	}}
	ok, _, err := e.admit(pod, "kube-system", nil)
	if ok && err == nil {
		t.Fatal("a pipe mount was admitted without parameters")
	}
	// A ConfigMap without the key allows nobody.
	ok, _, err = e.admit(pod, "kube-system", map[string]any{"data": map[string]any{}})
	if err != nil || ok {
		t.Fatalf("empty allow-list: admitted=%v err=%v, want a denial", ok, err)
	}
}
