/** The engines hanactl serves: the one list every process boundary and URL reader uses. */
export const ENGINES = ['sqlite', 'postgres', 'mysql', 'hana'] as const;
export type Engine = (typeof ENGINES)[number];
