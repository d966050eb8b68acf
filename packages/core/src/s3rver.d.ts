// s3rver (the test S3 server, see startTestS3 in testing.ts) ships no types: what the tests use.
declare module "s3rver" {
  export default class S3rver {
    constructor(options: {
      port?: number;
      address?: string;
      silent?: boolean;
      directory: string;
      configureBuckets?: { name: string; configs: string[] }[];
    });
    run(): Promise<{ address: string; port: number }>;
    close(): Promise<void>;
  }
}
