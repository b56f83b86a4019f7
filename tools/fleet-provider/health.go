package main

// Health checks the operator defines per kind (the stack file's `healthChecks`, as Flux's
// healthCheckExprs): CEL expressions over the live object decide whether it is ready, instead of
// kstatus. This file is the rule's one home: the readiness wait after an apply (apply.go) and a
// refresh (driftOf) judge with it; `status` reads the pair's state it leaves.
//
// Evaluation follows Flux's RFC 0009: an object whose status.observedGeneration is behind its
// metadata.generation is in progress; then `inProgress` (true: in progress), `failed` (true: failed),
// `current` (true: ready), in that order; none true: in progress. An expression reads the object's
// top-level fields as variables (`status.phase`, as Flux's expressions are written) or the whole object
// as `self`.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"cel.dev/cel-go/cel"
	"cel.dev/cel-go/common/types"
	"cel.dev/cel-go/ext"
	kstatus "github.com/fluxcd/cli-utils/pkg/kstatus/status"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

const (
	// healthCostLimit bounds one evaluation's CEL cost (the expressions are the operator's, but the
	// objects they walk are content: a list of a million conditions must not stall an apply). The
	// API server's limit for one validation rule.
	healthCostLimit = 1_000_000
	// healthEvalTimeout bounds one evaluation's wall time, checked every healthInterruptEvery steps
	// of a comprehension.
	healthEvalTimeout    = time.Second
	healthInterruptEvery = 100
)

// expression is one compiled expression and where it came from, for messages.
type expression struct {
	field string // current, inProgress or failed
	text  string
	prog  cel.Program
}

// kindCheck is one kind's compiled expressions, in evaluation order (inProgress, failed, current).
type kindCheck struct {
	inProgress, failed, current *expression
}

// healthRules are a pair's compiled checks by group/kind (the version is not matched, as in Flux: an
// object of another served version of the kind is judged by the same expressions).
type healthRules map[string]*kindCheck

// Verdict is an object's readiness by its kind's check.
type Verdict struct {
	Status kstatus.Status
	// Why it is not Current: the expression that decided, or the evaluation's error.
	Message string
}

var (
	celEnvOnce sync.Once
	celEnv     *cel.Env
	celEnvErr  error
	// Compiled once per provider process (one engine run): every pair carries the same list.
	compiledMu sync.Mutex
	compiled   = map[string]healthRules{}
)

func healthEnv() (*cel.Env, error) {
	celEnvOnce.Do(func() {
		celEnv, celEnvErr = cel.NewEnv(
			cel.OptionalTypes(), cel.CrossTypeNumericComparisons(true), cel.DefaultUTCTimeZone(true),
			ext.Strings(), ext.Sets(), ext.Encoders(),
		)
	})
	return celEnv, celEnvErr
}

// compileHealthChecks compiles every expression; an error names the entry, its field, kind and
// expression. The expressions are parsed, not type-checked: an object's fields are not declared (a
// custom resource's schema is not known here), as in Flux.
func compileHealthChecks(list []HealthCheck) (healthRules, error) {
	if len(list) == 0 {
		return nil, nil
	}
	raw, _ := json.Marshal(list)
	compiledMu.Lock()
	defer compiledMu.Unlock()
	if rules, ok := compiled[string(raw)]; ok {
		return rules, nil
	}
	env, err := healthEnv()
	if err != nil {
		return nil, fmt.Errorf("the CEL environment: %w", err)
	}
	rules := healthRules{}
	var problems healthProblems
	for i, hc := range list {
		key := groupOf(hc.APIVersion) + "/" + hc.Kind
		fail := func(field, reason string) {
			problems = append(problems, healthProblem{Index: i, Field: field, Reason: reason})
		}
		switch {
		case hc.Kind == "" || hc.APIVersion == "":
			fail("", "apiVersion and kind are required")
			continue
		case rules[key] != nil:
			fail("kind", fmt.Sprintf("%s %s has health checks already", hc.APIVersion, hc.Kind))
			continue
		case hc.Current == "":
			fail("current", fmt.Sprintf("is required (%s %s)", hc.APIVersion, hc.Kind))
			continue
		}
		kc := &kindCheck{}
		for _, e := range []struct {
			field, text string
			into        **expression
		}{{"inProgress", hc.InProgress, &kc.inProgress}, {"failed", hc.Failed, &kc.failed}, {"current", hc.Current, &kc.current}} {
			if e.text == "" {
				continue
			}
			prog, err := compileExpression(env, e.text)
			if err != nil {
				fail(e.field, fmt.Sprintf("%s %s: %q does not compile: %v", hc.APIVersion, hc.Kind, e.text, err))
				continue
			}
			*e.into = &expression{field: e.field, text: e.text, prog: prog}
		}
		rules[key] = kc
	}
	if len(problems) > 0 {
		return nil, problems
	}
	compiled[string(raw)] = rules
	return rules, nil
}

// healthProblem is one entry's error: its index in the list, its field ("" for the entry) and why.
type healthProblem struct {
	Index  int    `json:"index"`
	Field  string `json:"field,omitempty"`
	Reason string `json:"reason"`
}

type healthProblems []healthProblem

func (p healthProblems) Error() string {
	lines := make([]string, len(p))
	for i, x := range p {
		path := fmt.Sprintf("healthChecks[%d]", x.Index)
		if x.Field != "" {
			path += "." + x.Field
		}
		lines[i] = path + ": " + x.Reason
	}
	return strings.Join(lines, "; ")
}

// checkHealthChecksMain is the provider binary's `--check-health-checks` mode: the program compiles
// the stack's expressions with this same code before anything is registered (core/config/health-check-compile.ts).
// It reads the list as JSON on stdin and writes the problems as JSON (an empty list: all compile).
func checkHealthChecksMain(in io.Reader, out io.Writer) error {
	var list []HealthCheck
	if err := json.NewDecoder(in).Decode(&list); err != nil {
		return fmt.Errorf("reading the health checks: %w", err)
	}
	problems := healthProblems{}
	if _, err := compileHealthChecks(list); err != nil {
		var p healthProblems
		if !errors.As(err, &p) {
			return err
		}
		problems = p
	}
	return json.NewEncoder(out).Encode(problems)
}

func compileExpression(env *cel.Env, text string) (cel.Program, error) {
	ast, iss := env.Parse(text)
	if iss.Err() != nil {
		return nil, iss.Err()
	}
	return env.Program(ast, cel.EvalOptions(cel.OptOptimize), cel.CostLimit(healthCostLimit), cel.InterruptCheckFrequency(healthInterruptEvery))
}

// of is the check of an object's kind, or nil (the default readiness applies).
func (r healthRules) of(group, kind string) *kindCheck {
	if r == nil {
		return nil
	}
	return r[group+"/"+kind]
}

// judge evaluates the check on a live object (RFC 0009's order, see the file's comment).
func (kc *kindCheck) judge(ctx context.Context, obj map[string]any) Verdict {
	u := unstructured.Unstructured{Object: obj}
	observed, hasObserved, _ := unstructured.NestedInt64(obj, "status", "observedGeneration")
	if hasObserved && u.GetGeneration() != 0 && observed != u.GetGeneration() {
		return Verdict{Status: kstatus.InProgressStatus, Message: fmt.Sprintf("status.observedGeneration %d is behind metadata.generation %d", observed, u.GetGeneration())}
	}
	vars := make(map[string]any, len(obj)+1)
	for k, v := range obj {
		vars[k] = v
	}
	vars["self"] = obj
	for _, step := range []struct {
		e      *expression
		status kstatus.Status
	}{{kc.inProgress, kstatus.InProgressStatus}, {kc.failed, kstatus.FailedStatus}, {kc.current, kstatus.CurrentStatus}} {
		if step.e == nil {
			continue
		}
		holds, err := step.e.eval(ctx, vars)
		if err != nil {
			return Verdict{Status: kstatus.InProgressStatus, Message: fmt.Sprintf("health check %s expression %q: %v", step.e.field, step.e.text, err)}
		}
		if !holds {
			continue
		}
		if step.status == kstatus.CurrentStatus {
			return Verdict{Status: kstatus.CurrentStatus}
		}
		return Verdict{Status: step.status, Message: fmt.Sprintf("health check %s expression %q holds", step.e.field, step.e.text)}
	}
	return Verdict{Status: kstatus.InProgressStatus, Message: fmt.Sprintf("health check current expression %q is false", kc.current.text)}
}

func (e *expression) eval(ctx context.Context, vars map[string]any) (bool, error) {
	ctx, cancel := context.WithTimeout(ctx, healthEvalTimeout)
	defer cancel()
	val, _, err := e.prog.ContextEval(ctx, vars)
	if err != nil {
		return false, err
	}
	b, ok := val.(types.Bool)
	if !ok {
		return false, fmt.Errorf("gives %s, not a bool", val.Type().TypeName())
	}
	return bool(b), nil
}
