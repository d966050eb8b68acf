export {
  deleteFile,
  downloadFile,
  s3ResourceInfo,
  uploadFile,
  type DownloadedFile,
  type S3ResourceInfo,
  type StorageTarget,
  type UploadInput,
} from "./object-storage.ts";
export { parseS3Connection, S3Bucket, type S3Connection } from "./s3-bucket.ts";
export {
  editLargeFileStorage,
  largeFileStorageSetting,
  parseLargeFileStorage,
  type LargeFileStorage,
  type StorageSetting,
} from "./settings.ts";
export { objectStorageView, testObjectStorage, type ObjectStorageView } from "./connection-test.ts";
