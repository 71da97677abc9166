export { Checkpoint, type CheckpointFile } from './checkpoint'
export type { ImportPlatform } from './delivery'
export {
  type FailedRecord,
  type ImportOptions,
  type ImportSummary,
  type InvalidRecord,
  importRecords,
  type RecordSource,
  type ValidationReport,
} from './import-records'
export {
  type Direction,
  type FieldMapping,
  MAPPED_FIELDS,
  type MapOptions,
  type MappedField,
  type MappedRecord,
  mapRecord,
  parseMapping,
  toIsoTimestamp,
} from './mapping'
export { formatProgress, type ImportProgress, type ProgressPrinterOptions, progressPrinter } from './progress'
export { RateLimit } from './rate-limit'
export {
  type CsvOptions,
  type FileFormat,
  formatOf,
  readCsv,
  readJsonLines,
  readRecordsFile,
  SourceLine,
} from './readers'
