/** The shape of a V8 CPU profile (`node --cpu-prof`), as the profiling scripts read it. */
export interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
}

export interface ProfileNode {
  id: number;
  callFrame: CallFrame;
  children?: number[];
}

export interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
  startTime?: number;
  endTime?: number;
}
