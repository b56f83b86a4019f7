package main

// A kubeconfig that acts as a service account: Fleet installs a bundle that names a serviceAccount
// impersonating system:serviceaccount:<agent namespace>:<name>, so the downstream cluster's RBAC for
// that account, not the agent's cluster-admin, decides what the bundle may change. The stack's
// kubeconfig for the cluster (text, path, or the ambient one with a context) is loaded by clientcmd,
// reduced to the one context in use, its files inlined, and its user given `as:`; the Pulumi Kubernetes
// provider (which has no impersonation option) loads it with the same client-go.

import (
	"fmt"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

func impersonate(job ImpersonateJob) ImpersonateResult {
	raw, err := rawConfigOf(job.Kubeconfig, job.Context)
	if err != nil {
		return ImpersonateResult{Error: fmt.Sprintf("loading the kubeconfig: %v", err)}
	}
	if err := clientcmdapi.MinifyConfig(&raw); err != nil {
		return ImpersonateResult{Error: err.Error()}
	}
	if err := clientcmdapi.FlattenConfig(&raw); err != nil {
		return ImpersonateResult{Error: err.Error()}
	}
	for _, user := range raw.AuthInfos {
		if job.As == "" {
			break
		}
		user.Impersonate = job.As
		user.ImpersonateUID = ""
		user.ImpersonateGroups = nil
		user.ImpersonateUserExtra = nil
	}
	out, err := clientcmd.Write(raw)
	if err != nil {
		return ImpersonateResult{Error: err.Error()}
	}
	return ImpersonateResult{Kubeconfig: string(out)}
}

// rawConfigOf loads a kubeconfig as restConfigOf does (clientConfigOf), with the context made current.
func rawConfigOf(kubeconfig, context string) (clientcmdapi.Config, error) {
	loader, err := clientConfigOf(kubeconfig, context)
	if err != nil {
		return clientcmdapi.Config{}, err
	}
	raw, err := loader.RawConfig()
	if err != nil {
		return raw, err
	}
	if context != "" {
		if _, ok := raw.Contexts[context]; !ok {
			return raw, fmt.Errorf("context %q not found", context)
		}
		raw.CurrentContext = context
	}
	return raw, nil
}
