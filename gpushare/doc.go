// Package gpushare does fractional GPU accounting compatible with HAMi: it
// decodes HAMi's node and pod annotations, fits and scores pods with HAMi's
// binpack and spread policies, keeps a live ledger of used and free GPU
// memory, cores and slots, and discovers local GPUs through NVML.
package gpushare
