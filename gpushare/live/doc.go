// Package live keeps a gpushare.Ledger current from a cluster: Watch lists
// the cluster's Nodes, Pods and ResourceQuotas through client-go
// informers, feeds them to the ledger (SetNode, SetPod, SetResourceQuota
// and the deletes) and follows every change until its context ends. Its
// client needs list and watch on nodes, pods and resourcequotas.
//
//	cs, err := kubernetes.NewForConfig(restConfig)
//	ledger, err := gpushare.NewLedger(gpushare.Config{}) // HAMi's chart defaults
//	err = live.Watch(ctx, cs, ledger)                     // returns once synced
//	placement, err := ledger.Fit(req)                     // decided on the cluster as it is
//
// It is a package of its own so that package gpushare, pure computation,
// compiles without client-go. Watch returns once the initial lists are
// applied; objects the ledger leaves out are in the ledger's Problems and
// logged to its Config().Logger. The informers keep only the fields
// accounting reads, so their caches stay small on large clusters.
//
// Errors: ErrNoClient without a client, ErrAlreadyWatched while another
// Watch feeds the same ledger, ctx's cause when it ends before the initial
// sync.
package live
