/** What reading a source gives: a GitRepo's checked-out commit, or a HelmOp's generated bundle (core/source/read-source.ts). */
export interface Source {
  gitRepo: string;
  commit: string;
  /** The checked-out tree of that commit (read-only by convention). */
  dir: string;
  /** Whether this resolution had to fetch objects from the remote. */
  fetched: boolean;
  /** What the operator should know about this resolution (a fetch that could not be shallow). */
  warnings: string[];
  /** A source whose directory is this run's alone (a HelmOp's, which may hold the stack's secret values): removes it once read. */
  dispose?: () => void;
}
